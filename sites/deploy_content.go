package sites

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/pocketbase/pocketbase/core"
	"golang.org/x/sync/errgroup"

	"sitedrop/sites/store"
)

// batchPutter is a store.BlobStore that can store many blobs durably at once,
// cheaper than one Put each (store.FSStore).
type batchPutter interface {
	PutBatch(ctx context.Context, blobs map[string][]byte) error
}

// hasParallel is how many blobs writeBlobs asks the store about at once:
// on S3 each question is a request (a HEAD), on files a stat.
const hasParallel = 8

// writeBlobs stores every blob of m the store does not have yet (Has
// also refreshes the age of those it has, so the collector spares them;
// those that live names are only looked for: see liveContent). The
// store is not asked about the variants of a file it lacks (see
// madeFrom).
func (s *Service) writeBlobs(ctx context.Context, m Manifest, blobs map[string][]byte, live *liveContent) error {
	variants := madeFrom(m, blobs)
	files := blobs
	if len(variants) > 0 {
		files = make(map[string][]byte, len(blobs)-len(variants))
		for h, data := range blobs {
			if _, ok := variants[h]; !ok {
				files[h] = data
			}
		}
	}
	missing, err := s.missingBlobs(ctx, files, live)
	if err != nil {
		return err
	}
	if len(variants) > 0 {
		ask := make(map[string][]byte)
		for v, file := range variants {
			if _, lacked := missing[file]; lacked {
				missing[v] = blobs[v]
			} else {
				ask[v] = blobs[v]
			}
		}
		more, err := s.missingBlobs(ctx, ask, live)
		if err != nil {
			return err
		}
		for h, data := range more {
			missing[h] = data
		}
	}
	if bp, ok := s.store.(batchPutter); ok {
		if err := bp.PutBatch(ctx, missing); err != nil {
			return fmt.Errorf("store blobs: %w", err)
		}
		return nil
	}
	for h, data := range missing {
		if err := cancelled(ctx); err != nil {
			return err
		}
		if err := s.store.Put(ctx, h, data); err != nil {
			return fmt.Errorf("store blob: %w", err)
		}
	}
	return nil
}

// madeFrom maps each variant of m among blobs to the file it was made
// from; a hash that is also a file's (or a source's) is left out. A
// variant is the compression of its file's bytes, so when the store
// lacks the file it lacks the variant too (unless the very same bytes
// were uploaded, which are then written again, whole): a first deploy
// of 1000 files asks about 1,000 blobs, not 4,000.
func madeFrom(m Manifest, blobs map[string][]byte) map[string]string {
	out := make(map[string]string)
	for _, e := range m {
		for _, v := range e.Encoded {
			if _, ok := blobs[v.Hash]; ok {
				out[v.Hash] = e.Hash
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	for _, e := range m {
		delete(out, e.Hash)
		if e.Source != "" {
			delete(out, e.Source)
		}
	}
	return out
}

// localStore is a store whose questions are cheap system calls, not
// requests (store.FSStore): they are asked one after the other, with no
// goroutine and no hand-off each (an unchanged redeploy of 1000 files
// asks 4,000).
type localStore interface {
	Root() string
}

// missingBlobs asks the store about every blob and returns those it does
// not have: hasParallel at a time on a store of requests, in turn on a
// local one. A blob that live names (nil: none) is asked about without
// refreshing its age (live.has). The first error (or ctx's end) stops
// the questions not yet asked.
func (s *Service) missingBlobs(parent context.Context, blobs map[string][]byte, live *liveContent) (map[string][]byte, error) {
	missing := make(map[string][]byte)
	if _, local := s.store.(localStore); local {
		for h, data := range blobs {
			if err := cancelled(parent); err != nil {
				return nil, err
			}
			ok, err := live.has(parent, s.store, h)
			if err != nil {
				return nil, fmt.Errorf("check blob: %w", err)
			}
			if !ok {
				missing[h] = data
			}
		}
		return missing, nil
	}
	g, ctx := errgroup.WithContext(parent)
	g.SetLimit(hasParallel)
	var mu sync.Mutex
	for h, data := range blobs {
		if ctx.Err() != nil {
			break
		}
		g.Go(func() error {
			ok, err := live.has(ctx, s.store, h)
			if err != nil {
				return fmt.Errorf("check blob: %w", err)
			}
			if !ok {
				mu.Lock()
				missing[h] = data
				mu.Unlock()
			}
			return nil
		})
	}
	err := g.Wait()
	if err := cancelled(parent); err != nil {
		return nil, err // the request's end, not a store error it caused
	}
	if err != nil {
		return nil, err
	}
	return missing, nil
}

// DeployedFiles returns the manifest and the blobs (with their
// precompressed variants) that a deploy of files stores, with no metadata
// applied: what a test or a tool needs to serve files as a deploy would.
func DeployedFiles(ctx context.Context, files []File) (Manifest, map[string][]byte, error) {
	return buildManifest(ctx, Upload{Files: files}, resolvedMeta{}, "", nil, nil)
}

// buildManifest prepares HTML files (the {{SUBMIT_URL}} placeholder
// replaced; a missing title, description or icon added to the head),
// makes the precompressed variants of compressible files (in parallel),
// and returns the manifest with the bytes of every distinct blob.
//
// known maps file hashes to variants a live version already has (see
// knownVariants): their files are not compressed again, and the caller
// must make sure those blobs still exist (ensureVariants).
//
// blocked, when set, tells a blocked sha256: a file whose bytes, as sent
// or as stored, are blocked stops it with a *BlockedContentError naming
// the file, before anything is compressed.
//
// It stops between files, and its compression workers between blobs,
// when ctx is cancelled. What it allocates beyond the files (a changed
// HTML file, the variants) is reserved from up.Memory first, and what it
// drops is given back at once (see compressVariants).
func buildManifest(ctx context.Context, up Upload, meta resolvedMeta, submitURL string, known map[string]map[string]EncodedEntry, blocked func(hash string) bool) (Manifest, map[string][]byte, error) {
	files := up.Files
	m := make(Manifest, len(files))
	blobs := make(map[string][]byte, len(files))
	placeholder := []byte(SubmitURLPlaceholder)
	var todo []string                                               // hashes to compress, once each
	tags := newHeadTags(meta.title, meta.description, meta.favicon) // once for every page
	for _, f := range files {
		if err := cancelled(ctx); err != nil {
			return nil, nil, err
		}
		data := f.Data
		if IsHTML(f.ContentType) {
			replaced := false
			if submitURL != "" && bytes.Contains(data, placeholder) {
				grown := bytes.Count(data, placeholder) * (len(submitURL) - len(placeholder))
				if err := reserveMem(up.Memory, int64(len(data)+max(grown, 0))); err != nil {
					return nil, nil, err
				}
				data = bytes.ReplaceAll(data, placeholder, []byte(submitURL))
				replaced = true
			}
			// the tags the page lacks, reserved only when it gets them
			if at, add := tags.plan(data); at >= 0 {
				if err := reserveMem(up.Memory, int64(len(data)+len(add))); err != nil {
					return nil, nil, err
				}
				withTags := insertTags(data, at, add)
				if replaced {
					releaseMem(up.Memory, int64(len(data)), true) // the page between the two
				}
				data = withTags
			}
		}
		h := store.HashBytes(data)
		entry := ManifestEntry{Hash: h, Size: int64(len(data)), Type: f.ContentType}
		if !bytes.Equal(data, f.Data) {
			entry.Source = store.HashBytes(f.Data)
			blobs[entry.Source] = f.Data
		}
		if blocked != nil && (blocked(h) || entry.Source != "" && blocked(entry.Source)) {
			return nil, nil, &BlockedContentError{Path: f.Path}
		}
		if _, seen := blobs[h]; !seen && len(data) >= minCompressSize && Compressible(f.ContentType) {
			if v, ok := known[h]; ok {
				entry.Encoded = v
			} else {
				todo = append(todo, h)
			}
		}
		blobs[h] = data
		m[f.Path] = entry
	}

	variants, err := compressAll(ctx, todo, blobs, up.Memory)
	if err != nil {
		return nil, nil, err
	}
	stored := make(map[string]map[string]EncodedEntry, len(variants)) // by source hash: each stored once
	for p, e := range m {
		v, ok := variants[e.Hash]
		if !ok {
			if e.Encoded == nil && known[e.Hash] != nil {
				e.Encoded = known[e.Hash] // a duplicate of a reused file
				m[p] = e
			}
			continue
		}
		if stored[e.Hash] == nil {
			stored[e.Hash] = storeVariants(v, blobs)
		}
		e.Encoded = stored[e.Hash]
		m[p] = e
	}
	return m, blobs, nil
}

// storeVariants adds the variant bytes v (by coding) to blobs and returns
// their manifest entries.
func storeVariants(v map[string][]byte, blobs map[string][]byte) map[string]EncodedEntry {
	enc := make(map[string]EncodedEntry, len(v))
	for coding, c := range v {
		ch := store.HashBytes(c)
		blobs[ch] = c
		enc[coding] = EncodedEntry{Hash: ch, Size: int64(len(c))}
	}
	return enc
}

// compressAll makes the variants of the blobs named by hashes, on every
// core, reserving them from mem. Workers take the next blob in turn; the
// caller is one of them, so one blob (a one-page deploy) starts no
// goroutine (a new one grew its stack for brotli's frames at every deploy:
// runtime.copystack was 1–3% of a one-page deploy's CPU). When ctx is
// cancelled or a blob fails (the memory budget refused, say), no further
// blob is started, the workers end after the blob they are on (a worker
// waiting for a compressor stops waiting), and the first error is
// returned: ctx's, or the failure's.
func compressAll(parent context.Context, hashes []string, blobs map[string][]byte, mem Memory) (map[string]map[string][]byte, error) {
	out := make(map[string]map[string][]byte, len(hashes))
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
		next     atomic.Int64 // the index of the next blob to start
	)
	work := func() {
		for {
			i := int(next.Add(1)) - 1
			if i >= len(hashes) || parent.Err() != nil || ctx.Err() != nil {
				return // parent's Err first: a context may only know when asked
			}
			v, err := compressVariants(ctx, blobs[hashes[i]], mem)
			mu.Lock()
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				cancel() // no further blob starts
			} else {
				out[hashes[i]] = v
			}
			mu.Unlock()
		}
	}
	for range min(runtime.GOMAXPROCS(0), len(hashes)) - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	if err := cancelled(parent); err != nil {
		return nil, err
	}
	if firstErr != nil {
		return nil, firstErr
	}
	return out, nil
}

// cancelled returns ctx's error, wrapped, when it is done.
func cancelled(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("deploy stopped: %w", err)
	}
	return nil
}

// liveContent is what a redeploy reads of the deployment's live version:
// its variants, so unchanged files are not compressed again, and every
// blob it names, which the redeploy looks for without refreshing their
// age (a stat, not a stat and a utimes: half the system calls of an
// unchanged redeploy of 1000 files, four blobs each). Those blobs need
// no refresh while the version names them: the collector spares every
// blob a version names, in this process and any other. still() checks,
// in the redeploy's transaction, that it still names them; when it no
// longer does (deleted from the dashboard meanwhile), they are asked
// about again with Has before the commit.
type liveContent struct {
	id  string
	raw []byte // the manifest as stored
	// known maps file hashes to their variants.
	known map[string]map[string]EncodedEntry
	// named holds every hash the manifest names.
	named map[string]bool
	// looked counts the blobs looked for without a refresh (tests).
	looked atomic.Int64
	// sure says every blob the manifest names is known present (see
	// verifiedVersions): they are counted present without a look.
	sure bool
}

// readLive reads the live version of dep; nil when it has none (a
// first deploy, or a draft deployment): nothing known.
func (s *Service) readLive(dep *core.Record) *liveContent {
	id := dep.GetString(FieldLiveVersion)
	if id == "" {
		return nil
	}
	raw, err := manifestBytes(s.app, id)
	if err != nil {
		return nil
	}
	m, err := ParseManifest(raw)
	if err != nil {
		return nil
	}
	l := &liveContent{id: id, raw: raw, known: make(map[string]map[string]EncodedEntry, len(m)), named: make(map[string]bool, 4*len(m))}
	for _, e := range m {
		if len(e.Encoded) > 0 {
			l.known[e.Hash] = e.Encoded
		}
		e.Hashes(func(h string) { l.named[h] = true })
	}
	return l
}

// trust has l's blobs counted present without a look when sure (l nil:
// nothing to trust).
func (l *liveContent) trust(sure bool) {
	if l != nil {
		l.sure = sure
	}
}

// variants is l.known; nil for none.
func (l *liveContent) variants() map[string]map[string]EncodedEntry {
	if l == nil {
		return nil
	}
	return l.known
}

// has tells whether blobs holds h: when the live version names it,
// without refreshing its age, and without asking at all when l is sure;
// with Has otherwise (or when l is nil).
func (l *liveContent) has(ctx context.Context, blobs store.BlobStore, h string) (bool, error) {
	if l == nil || !l.named[h] {
		return blobs.Has(ctx, h)
	}
	l.looked.Add(1)
	if l.sure {
		return true, nil
	}
	return exists(ctx, blobs, h)
}

// still makes sure, within the redeploy's transaction tx, that the blobs
// of m that were looked for without a refresh are safe from the
// collector at the commit: the live version read before still names
// them (its manifest unchanged), or else Has finds and refreshes each.
func (l *liveContent) still(ctx context.Context, tx core.App, blobs store.BlobStore, m Manifest) error {
	if l == nil || l.looked.Load() == 0 {
		return nil
	}
	raw, err := manifestBytes(tx, l.id)
	if err == nil && bytes.Equal(raw, l.raw) {
		return nil
	}
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	for _, e := range m {
		var gone string
		e.Hashes(func(h string) {
			if gone != "" || !l.named[h] {
				return
			}
			if ok, err := blobs.Has(ctx, h); err != nil || !ok {
				gone = h
			}
		})
		if gone != "" {
			return fmt.Errorf("blob %s of the live version was collected during the deploy: deploy again", gone)
		}
	}
	return nil
}

// ensureVariants checks that the variant blobs reused from the live
// version still exist (touching them, so the collector spares them), and
// compresses again the files whose variants are gone.
func (s *Service) ensureVariants(ctx context.Context, m Manifest, blobs map[string][]byte, live *liveContent, mem Memory) error {
	known := live.variants()
	checked := map[string]bool{}
	for _, e := range m {
		if err := cancelled(ctx); err != nil {
			return err
		}
		v, reused := known[e.Hash]
		if !reused || len(e.Encoded) == 0 || checked[e.Hash] {
			continue
		}
		checked[e.Hash] = true
		whole := true
		for _, enc := range v {
			ok, err := live.has(ctx, s.store, enc.Hash)
			if err != nil {
				return fmt.Errorf("check blob: %w", err)
			}
			whole = whole && ok
		}
		if whole {
			continue
		}
		fresh, err := compressVariants(ctx, blobs[e.Hash], mem)
		if err != nil {
			return err
		}
		enc := storeVariants(fresh, blobs)
		for q, other := range m { // every path with these bytes
			if other.Hash == e.Hash {
				other.Encoded = enc
				m[q] = other
			}
		}
	}
	return nil
}
