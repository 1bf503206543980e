package s3store

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"golang.org/x/sync/errgroup"

	"sitedrop/sites/store"
)

// Key prefixes under the store's prefix.
const (
	blobsPrefix = "blobs/"
	keepPrefix  = "keep/"
)

// keepMarkerLife is how long after its time Walk keeps a KeepUntil
// marker: past it, the marker no longer matters to any collector grace
// shorter than this.
const keepMarkerLife = 24 * time.Hour

// putParallel is how many blobs PutBatch uploads at once.
const putParallel = 8

var _ store.BlobStore = (*Store)(nil)

func blobKey(hash string) string { return blobsPrefix + hash }

// Has implements store.BlobStore with a HEAD (or no request, for a blob
// this process wrote or saw). It does not refresh the blob's age, which
// S3 cannot do without rewriting it: the deploy service's lock (gcMu)
// already orders a deploy's Has and commit against this process's
// collector, the only one that deletes.
func (s *Store) Has(ctx context.Context, hash string) (bool, error) {
	return s.Exists(ctx, hash)
}

// Exists reports whether the store has a blob.
func (s *Store) Exists(ctx context.Context, hash string) (bool, error) {
	if !store.ValidHash(hash) {
		return false, fmt.Errorf("invalid blob hash %q", hash)
	}
	if s.present.has(hash) {
		return true, nil
	}
	_, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(s.loc.Bucket), Key: aws.String(s.key(blobKey(hash)))})
	if err != nil {
		if statusOf(err) == http.StatusNotFound {
			return false, nil
		}
		return false, fmt.Errorf("head blob %s: %w", hash, err)
	}
	s.present.add(hash)
	return true, nil
}

// Known reports, with no request, whether this process wrote or found
// the blob (see Store.present): true means the store has it; false means
// nothing.
func (s *Store) Known(hash string) bool {
	return s.present.has(hash)
}

// Put implements store.BlobStore: one PUT, If-None-Match: * (written
// once; an existing blob has the same bytes, so a refused write is a
// success).
func (s *Store) Put(ctx context.Context, hash string, data []byte) error {
	if !store.ValidHash(hash) {
		return fmt.Errorf("invalid blob hash %q", hash)
	}
	if got := store.HashBytes(data); got != hash {
		return fmt.Errorf("blob hash mismatch: want %s, got %s", hash, got)
	}
	return s.put(ctx, hash, data)
}

// put writes a blob whose hash has been checked.
func (s *Store) put(ctx context.Context, hash string, data []byte) error {
	_, err := s.PutObject(ctx, blobKey(hash), data, Condition{IfNoneMatch: true})
	if err != nil && err != ErrPrecondition {
		return fmt.Errorf("store blob: %w", err)
	}
	s.present.add(hash)
	return nil
}

// PutBatch stores many blobs, putParallel at a time. Every hash is checked
// before anything is written, so a bad one stores none.
func (s *Store) PutBatch(ctx context.Context, blobs map[string][]byte) error {
	for h, data := range blobs {
		if !store.ValidHash(h) {
			return fmt.Errorf("invalid blob hash %q", h)
		}
		if got := store.HashBytes(data); got != h {
			return fmt.Errorf("blob hash mismatch: want %s, got %s", h, got)
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(putParallel)
	for h, data := range blobs {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error { return s.put(gctx, h, data) }) // checked above
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return ctx.Err()
}

// Open implements store.BlobStore: one GET, and a ranged GET after a seek
// (see blob).
func (s *Store) Open(ctx context.Context, hash string) (store.Blob, error) {
	if !store.ValidHash(hash) {
		return nil, fmt.Errorf("invalid blob hash %q", hash)
	}
	b := &blob{ctx: ctx, s: s, key: s.key(blobKey(hash))}
	if err := b.get(0); err != nil {
		if statusOf(err) == http.StatusNotFound {
			return nil, store.ErrBlobNotFound
		}
		return nil, fmt.Errorf("open blob %s: %w", hash, err)
	}
	return b, nil
}

// Delete implements store.BlobStore; the blob's KeepUntil markers go too.
func (s *Store) Delete(ctx context.Context, hash string) error {
	if !store.ValidHash(hash) {
		return fmt.Errorf("invalid blob hash %q", hash)
	}
	s.present.remove(hash)
	if err := s.DeleteObject(ctx, blobKey(hash)); err != nil {
		return fmt.Errorf("delete blob: %w", err)
	}
	var markers []string
	err := s.ListObjects(ctx, keepPrefix+hash+"/", func(o ObjectInfo) error {
		markers = append(markers, o.Key)
		return nil
	})
	if err != nil {
		return fmt.Errorf("delete blob %s: %w", hash, err)
	}
	for _, k := range markers {
		if err := s.DeleteObject(ctx, k); err != nil {
			return err
		}
	}
	return nil
}

// KeepUntil spares a blob from the collector until about t, as
// FSStore.KeepUntil does: S3 cannot set an object's time, so a marker
// object keep/<hash>/<unix seconds> records it, and Walk reports the
// later of the blob's LastModified and its markers.
func (s *Store) KeepUntil(ctx context.Context, hash string, t time.Time) error {
	if !store.ValidHash(hash) {
		return fmt.Errorf("invalid blob hash %q", hash)
	}
	k := keepPrefix + hash + "/" + strconv.FormatInt(t.Unix(), 10)
	if _, err := s.PutObject(ctx, k, nil, Condition{}); err != nil {
		return fmt.Errorf("keep blob %s: %w", hash, err)
	}
	return nil
}

// Walk implements store.BlobStore: it lists the markers, then the blobs
// (1,000 keys per request), and calls fn with each blob's LastModified
// or, if later, its latest KeepUntil time. Markers more than
// keepMarkerLife past their time are deleted on the way.
func (s *Store) Walk(ctx context.Context, fn func(hash string, modTime time.Time) error) error {
	keep := map[string]time.Time{}
	var stale []string
	now := time.Now()
	err := s.ListObjects(ctx, keepPrefix, func(o ObjectInfo) error {
		hash, unix, ok := strings.Cut(strings.TrimPrefix(o.Key, keepPrefix), "/")
		sec, err := strconv.ParseInt(unix, 10, 64)
		if !ok || err != nil || !store.ValidHash(hash) {
			return nil
		}
		t := time.Unix(sec, 0)
		if now.Sub(t) > keepMarkerLife {
			stale = append(stale, o.Key)
			return nil
		}
		if t.After(keep[hash]) {
			keep[hash] = t
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, k := range stale {
		if err := s.DeleteObject(ctx, k); err != nil {
			return err
		}
	}
	return s.ListObjects(ctx, blobsPrefix, func(o ObjectInfo) error {
		hash := strings.TrimPrefix(o.Key, blobsPrefix)
		if !store.ValidHash(hash) {
			return nil
		}
		mod := o.Modified
		if t := keep[hash]; t.After(mod) {
			mod = t
		}
		return fn(hash, mod)
	})
}

// presentMax bounds the hashes a Store remembers as present (about 100
// bytes each).
const presentMax = 200_000

// hashSet is a bounded set of blob hashes; when full it is emptied (it
// only saves requests).
type hashSet struct {
	mu  sync.Mutex
	max int
	m   map[string]struct{}
}

func newHashSet(max int) *hashSet { return &hashSet{max: max, m: map[string]struct{}{}} }

func (h *hashSet) has(k string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.m[k]
	return ok
}

func (h *hashSet) add(k string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.m) >= h.max {
		clear(h.m)
	}
	h.m[k] = struct{}{}
}

func (h *hashSet) remove(k string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.m, k)
}
