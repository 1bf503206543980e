package sites

import (
	"bytes"
	"context"
	"crypto/subtle"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"runtime"
	"sync"
	"time"

	"github.com/pocketbase/dbx"
	validation "github.com/pocketbase/ozzo-validation/v4"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/security"

	"sitedrop/sites/accounts"
	"sitedrop/sites/store"
)

// Storage types of a deployment.
const (
	StorageHTML  = "html"  // one HTML document, stored as index.html
	StorageFiles = "files" // a set of files
)

// StatusActive is the status of a deployment that is served.
const StatusActive = "active"

// Metadata are the optional descriptive fields of a deploy. A nil field
// keeps the deployment's current value (or the empty default on create).
type Metadata struct {
	Title       *string
	Description *string
	Favicon     *string
	IsSPA       *bool
}

// Upload is the content of a deploy: already validated files.
type Upload struct {
	// StorageType is StorageHTML or StorageFiles.
	StorageType string
	Files       []File
}

// CreateParams describes a new deployment.
type CreateParams struct {
	// Owner is the account the deployment belongs to; nil deploys
	// anonymously with a claim token and an expiry.
	Owner *core.Record
	// ID is the id of the new deployment (imports, fixtures); empty
	// generates one.
	ID string
	// Slug is the wanted slug; empty generates one.
	Slug   string
	Meta   Metadata
	Upload Upload
	// AnonTTL is how long an anonymous deployment lives.
	AnonTTL time.Duration
}

// Created is the result of Create.
type Created struct {
	Record *core.Record
	// ClaimToken is the plaintext claim token of an anonymous deployment,
	// shown once; only its hash is stored.
	ClaimToken string
}

// Create validates the slug, stores the content and commits the deployment
// with its first version in one transaction. store.Blob writes come first, so a
// failure at any point leaves no deployment behind. When ctx is cancelled
// (the client went away), the work stops between files and nothing is
// committed; the error wraps ctx.Err().
func (s *Service) Create(ctx context.Context, p CreateParams) (*Created, error) {
	// Refuse what the transaction would refuse before any content is
	// written, so refused deploys leave nothing to collect. The
	// transaction checks again: these reads only save the work.
	if err := s.PrecheckCreate(p.Owner, p.Slug); err != nil {
		return nil, err
	}
	if p.ID == "" {
		p.ID = core.GenerateDefaultRandomId() // known before the content: {{SUBMIT_URL}}
	}
	meta := resolveMeta(nil, p.Meta)
	manifest, blobs, err := buildManifest(ctx, p.Upload.Files, meta, s.submitURL(p.ID), nil)
	if err != nil {
		return nil, err
	}

	s.gcMu.RLock()
	defer s.gcMu.RUnlock()
	if err := s.writeBlobs(ctx, blobs); err != nil {
		return nil, err
	}
	if err := cancelled(ctx); err != nil {
		return nil, err // the blobs written are left to the collector
	}

	out := &Created{}
	now := time.Now().UTC()
	err = s.app.RunInTransaction(func(tx core.App) error {
		slug := p.Slug
		var err error
		if slug == "" {
			slug, err = s.generateFreeSlug(tx)
		} else {
			err = s.takeSlug(tx, slug, now)
		}
		if err != nil {
			return err
		}
		deps, err := tx.FindCachedCollectionByNameOrId(DeploymentsCollection)
		if err != nil {
			return fmt.Errorf("find deployments collection: %w", err)
		}
		rec := core.NewRecord(deps)
		rec.Set("id", p.ID)
		versionID := core.GenerateDefaultRandomId()
		rec.Set("slug", slug)
		rec.Set("status", StatusActive)
		rec.Set("storage_type", p.Upload.StorageType)
		rec.Set("live_version", versionID)
		meta.apply(rec)
		if p.Owner != nil {
			rec.Set("owner", p.Owner.Id)
		} else {
			out.ClaimToken = security.RandomString(40)
			rec.Set("claim_token_hash", accounts.HashSecret(out.ClaimToken))
			rec.Set("expires_at", now.Add(p.AnonTTL))
		}
		if err := tx.Save(rec); err != nil {
			return mapSaveError(err)
		}
		if err := s.saveVersion(tx, rec.Id, versionID, 1, manifest); err != nil {
			return err
		}
		out.Record = rec
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Replace stores the new content and, in one transaction, adds it as the
// deployment's next version and points the deployment at it, with the
// metadata that meta changes. Readers see the old site or the new one; an
// error anywhere leaves the old one live. A cancelled ctx stops it as it
// stops Create.
func (s *Service) Replace(ctx context.Context, dep *core.Record, meta Metadata, up Upload) (*core.Record, error) {
	// One replace at a time per deployment, merging the metadata over the
	// current record, so two PUTs that each change one field keep both.
	unlock := s.lockDeployment(dep.Id)
	defer unlock()
	if err := cancelled(ctx); err != nil {
		return nil, err // gone while waiting for another replace
	}
	dep, err := s.app.FindRecordById(DeploymentsCollection, dep.Id)
	if err != nil {
		return nil, ErrNotFound
	}
	m := resolveMeta(dep, meta)
	known := s.knownVariants(dep)
	manifest, blobs, err := buildManifest(ctx, up.Files, m, s.submitURL(dep.Id), known)
	if err != nil {
		return nil, err
	}

	s.gcMu.RLock()
	defer s.gcMu.RUnlock()
	if err := s.ensureVariants(ctx, manifest, blobs, known); err != nil {
		return nil, err
	}
	if err := s.writeBlobs(ctx, blobs); err != nil {
		return nil, err
	}
	if err := cancelled(ctx); err != nil {
		return nil, err // the blobs written are left to the collector
	}

	var out *core.Record
	err = s.app.RunInTransaction(func(tx core.App) error {
		fresh, err := tx.FindRecordById(DeploymentsCollection, dep.Id)
		if err != nil {
			return ErrNotFound
		}
		var last struct {
			N int `db:"n"`
		}
		err = tx.DB().NewQuery("SELECT COALESCE(MAX([[number]]), 0) AS n FROM {{versions}} WHERE [[deployment]] = {:d}").
			Bind(dbx.Params{"d": fresh.Id}).One(&last)
		if err != nil {
			return fmt.Errorf("find last version: %w", err)
		}
		number := last.N + 1
		versionID := core.GenerateDefaultRandomId()
		if err := s.saveVersion(tx, fresh.Id, versionID, number, manifest); err != nil {
			return err
		}
		fresh.Set("live_version", versionID)
		fresh.Set("storage_type", up.StorageType)
		m.apply(fresh)
		if err := tx.Save(fresh); err != nil {
			return mapSaveError(err)
		}
		if err := s.pruneVersions(tx, fresh.Id, number-s.cfg.KeepVersions+1); err != nil {
			return err
		}
		out = fresh
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Claim ties the anonymous deployment slug to owner when token matches: it
// then no longer expires. Unknown, expired and already claimed slugs are
// ErrNotFound; a wrong token is ErrInvalidClaimToken; a full plan is
// ErrSlotLimit (enforced by the record hook that guards every save).
func (s *Service) Claim(owner *core.Record, slug, token string) (*core.Record, error) {
	var out *core.Record
	err := s.app.RunInTransaction(func(tx core.App) error {
		rec, err := Claimable(tx, slug, token)
		if err != nil {
			return err
		}
		rec.Set("owner", owner.Id)
		rec.Set("expires_at", "")
		rec.Set("claim_token_hash", "")
		if err := tx.Save(rec); err != nil {
			return mapSaveError(err)
		}
		out = rec
		return nil
	})
	return out, err
}

// Claimable returns the anonymous, unexpired deployment slug when token is
// its claim token: ErrNotFound for unknown, expired and owned slugs,
// ErrInvalidClaimToken for a wrong token (compared in constant time).
func Claimable(app core.App, slug, token string) (*core.Record, error) {
	rec, err := app.FindFirstRecordByData(DeploymentsCollection, "slug", slug)
	if err != nil || rec.GetString("owner") != "" || IsExpired(rec, time.Now()) {
		return nil, ErrNotFound
	}
	want := rec.GetString("claim_token_hash")
	if want == "" || token == "" || subtle.ConstantTimeCompare([]byte(want), []byte(accounts.HashSecret(token))) != 1 {
		return nil, ErrInvalidClaimToken
	}
	return rec, nil
}

// IsExpired reports whether an anonymous deployment record has passed its
// expiry at now.
func IsExpired(rec *core.Record, now time.Time) bool {
	exp := rec.GetDateTime("expires_at")
	return !exp.IsZero() && !exp.Time().After(now)
}

// FindOwned returns the deployment id owned by owner, or ErrNotFound (also
// when it exists but belongs to someone else, so ids do not leak).
func (s *Service) FindOwned(owner *core.Record, id string) (*core.Record, error) {
	rec, err := s.app.FindRecordById(DeploymentsCollection, id)
	if err != nil || owner == nil || rec.GetString("owner") != owner.Id {
		return nil, ErrNotFound
	}
	return rec, nil
}

// ListOwned returns owner's deployments, most recently updated first.
func (s *Service) ListOwned(owner *core.Record) ([]*core.Record, error) {
	recs, err := s.app.FindRecordsByFilter(DeploymentsCollection, "owner = {:owner}", "-updated,-created", 0, 0,
		dbx.Params{"owner": owner.Id})
	if err != nil {
		return nil, fmt.Errorf("list deployments: %w", err)
	}
	return recs, nil
}

// Delete removes a deployment. Its versions go with it (cascade) and the
// record hooks take the site offline and schedule its content for
// collection, so the API and the admin dashboard behave the same.
func (s *Service) Delete(rec *core.Record) error {
	if err := s.app.Delete(rec); err != nil {
		return fmt.Errorf("delete deployment %s: %w", rec.Id, err)
	}
	return nil
}

// CheckSlot returns ErrSlotLimit when saving rec would give its owner more
// deployments than the owner's plan allows. It must run inside the
// transaction that saves rec, so that concurrent creates and claims are
// counted one after the other.
func (s *Service) CheckSlot(tx core.App, rec *core.Record) error {
	owner := rec.GetString("owner")
	if owner == "" {
		return nil
	}
	if !rec.IsNew() && rec.Original().GetString("owner") == owner {
		return nil
	}
	user, err := tx.FindRecordById(accounts.UsersCollection, owner)
	if err != nil {
		return fmt.Errorf("find owner %s: %w", owner, err)
	}
	n, err := tx.CountRecords(DeploymentsCollection, dbx.HashExp{"owner": owner}, dbx.Not(dbx.HashExp{"id": rec.Id}))
	if err != nil {
		return fmt.Errorf("count deployments: %w", err)
	}
	if n >= int64(s.SlotLimit(user.GetString("plan"))) {
		return ErrSlotLimit
	}
	return nil
}

// PrecheckCreate tells whether a deployment for owner (nil: anonymous)
// with slug ("" generates one) would be refused for its slug or for the
// owner's slots, from the current state. Handlers call it before reading
// content, so a refused deploy costs little; Create calls it before it
// writes any content, and its transaction checks for good.
func (s *Service) PrecheckCreate(owner *core.Record, slug string) error {
	if slug != "" {
		if err := ValidateSlug(slug); err != nil {
			return err
		}
		if s.IsReserved(slug) {
			return ErrSlugReserved
		}
		if rec, err := s.app.FindFirstRecordByData(DeploymentsCollection, "slug", slug); err == nil &&
			!(rec.GetString("owner") == "" && IsExpired(rec, time.Now())) {
			return ErrSlugTaken
		}
	}
	if owner == nil {
		return nil
	}
	col, err := s.app.FindCachedCollectionByNameOrId(DeploymentsCollection)
	if err != nil {
		return fmt.Errorf("find deployments collection: %w", err)
	}
	probe := core.NewRecord(col)
	probe.Set("owner", owner.Id)
	return s.CheckSlot(s.app, probe)
}

// lockDeployment serialises replaces of one deployment and returns the
// unlock function. Locks are striped: unrelated deployments rarely share one.
func (s *Service) lockDeployment(id string) func() {
	h := fnv.New32a()
	h.Write([]byte(id))
	mu := &s.deployLocks[h.Sum32()%uint32(len(s.deployLocks))]
	mu.Lock()
	return mu.Unlock
}

// takeSlug makes sure slug is free inside tx. An anonymous deployment that
// has expired but is not yet purged gives its slug up at once.
func (s *Service) takeSlug(tx core.App, slug string, now time.Time) error {
	rec, err := tx.FindFirstRecordByData(DeploymentsCollection, "slug", slug)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("look up slug %s: %w", slug, err)
	}
	if rec.GetString("owner") == "" && IsExpired(rec, now) {
		if err := tx.Delete(rec); err != nil {
			return fmt.Errorf("purge expired %s: %w", slug, err)
		}
		return nil
	}
	return ErrSlugTaken
}

func (s *Service) generateFreeSlug(tx core.App) (string, error) {
	for range 20 {
		slug := GenerateSlug()
		if s.IsReserved(slug) {
			continue
		}
		if _, err := tx.FindFirstRecordByData(DeploymentsCollection, "slug", slug); err != nil {
			return slug, nil
		}
	}
	return "", errors.New("no free slug found after 20 tries")
}

func (s *Service) saveVersion(tx core.App, depID, versionID string, number int, m Manifest) error {
	col, err := tx.FindCachedCollectionByNameOrId(VersionsCollection)
	if err != nil {
		return fmt.Errorf("find versions collection: %w", err)
	}
	v := core.NewRecord(col)
	v.Set("id", versionID)
	v.Set("deployment", depID)
	v.Set("number", number)
	v.Set("manifest", m)
	v.Set("file_count", len(m))
	v.Set("total_bytes", m.TotalBytes())
	if err := tx.Save(v); err != nil {
		return fmt.Errorf("save version %d: %w", number, err)
	}
	return nil
}

// pruneVersions deletes the deployment's versions numbered below keepFrom
// (the new version is number N; keeping K means keepFrom = N-K+1).
func (s *Service) pruneVersions(tx core.App, depID string, keepFrom int) error {
	if keepFrom <= 1 {
		return nil
	}
	old, err := tx.FindRecordsByFilter(VersionsCollection, "deployment = {:d} && number < {:n}", "", 0, 0,
		dbx.Params{"d": depID, "n": keepFrom})
	if err != nil {
		return fmt.Errorf("find old versions: %w", err)
	}
	for _, v := range old {
		if err := tx.Delete(v); err != nil {
			return fmt.Errorf("prune version: %w", err)
		}
	}
	return nil
}

// batchPutter is a store.BlobStore that can store many blobs durably at once,
// cheaper than one Put each (store.FSStore).
type batchPutter interface {
	PutBatch(ctx context.Context, blobs map[string][]byte) error
}

// writeBlobs stores every blob the store does not have yet (Has also
// refreshes the age of those it has, so the collector spares them).
func (s *Service) writeBlobs(ctx context.Context, blobs map[string][]byte) error {
	missing := make(map[string][]byte)
	for h, data := range blobs {
		if err := cancelled(ctx); err != nil {
			return err
		}
		ok, err := s.store.Has(ctx, h)
		if err != nil {
			return fmt.Errorf("check blob: %w", err)
		}
		if !ok {
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

// mapSaveError turns PocketBase's unique-slug validation error into
// ErrSlugTaken and passes other errors through.
func mapSaveError(err error) error {
	var verrs validation.Errors
	if errors.As(err, &verrs) {
		if ve, ok := verrs["slug"].(validation.Error); ok && ve.Code() == "validation_not_unique" {
			return ErrSlugTaken
		}
	}
	return err
}

// resolvedMeta is Metadata with every field decided.
type resolvedMeta struct {
	title, description, favicon string
	isSPA                       bool
}

// resolveMeta merges m over the current values of rec (nil: empty defaults).
func resolveMeta(rec *core.Record, m Metadata) resolvedMeta {
	var r resolvedMeta
	if rec != nil {
		r = resolvedMeta{rec.GetString("title"), rec.GetString("description"), rec.GetString("favicon"), rec.GetBool("is_spa")}
	}
	if m.Title != nil {
		r.title = *m.Title
	}
	if m.Description != nil {
		r.description = *m.Description
	}
	if m.Favicon != nil {
		r.favicon = *m.Favicon
	}
	if m.IsSPA != nil {
		r.isSPA = *m.IsSPA
	}
	return r
}

func (r resolvedMeta) apply(rec *core.Record) {
	rec.Set("title", r.title)
	rec.Set("description", r.description)
	rec.Set("favicon", r.favicon)
	rec.Set("is_spa", r.isSPA)
}

// SubmitURLPlaceholder in a deployed HTML file becomes the deployment's
// absolute form endpoint at deploy time.
const SubmitURLPlaceholder = "{{SUBMIT_URL}}"

// submitURL is the form endpoint of a deployment, "" when not configured.
func (s *Service) submitURL(id string) string {
	if s.cfg.SubmitURL == nil {
		return ""
	}
	return s.cfg.SubmitURL(id)
}

// DeployedFiles returns the manifest and the blobs (with their
// precompressed variants) that a deploy of files stores, with no metadata
// applied: what a test or a tool needs to serve files as a deploy would.
func DeployedFiles(ctx context.Context, files []File) (Manifest, map[string][]byte, error) {
	return buildManifest(ctx, files, resolvedMeta{}, "", nil)
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
// It stops between files, and its compression workers between blobs,
// when ctx is cancelled.
func buildManifest(ctx context.Context, files []File, meta resolvedMeta, submitURL string, known map[string]map[string]EncodedEntry) (Manifest, map[string][]byte, error) {
	m := make(Manifest, len(files))
	blobs := make(map[string][]byte, len(files))
	placeholder := []byte(SubmitURLPlaceholder)
	var todo []string // hashes to compress, once each
	for _, f := range files {
		if err := cancelled(ctx); err != nil {
			return nil, nil, err
		}
		data := f.Data
		if IsHTML(f.ContentType) {
			if submitURL != "" && bytes.Contains(data, placeholder) {
				data = bytes.ReplaceAll(data, placeholder, []byte(submitURL))
			}
			data = InjectHead(data, meta.title, meta.description, meta.favicon)
		}
		h := store.HashBytes(data)
		entry := ManifestEntry{Hash: h, Size: int64(len(data)), Type: f.ContentType}
		if !bytes.Equal(data, f.Data) {
			entry.Source = store.HashBytes(f.Data)
			blobs[entry.Source] = f.Data
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

	variants, err := compressAll(ctx, todo, blobs)
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
// core. When ctx is cancelled, no further blob is started, the workers
// end after the blob they are on, and ctx's error is returned.
func compressAll(ctx context.Context, hashes []string, blobs map[string][]byte) (map[string]map[string][]byte, error) {
	out := make(map[string]map[string][]byte, len(hashes))
	if len(hashes) == 0 {
		return out, nil
	}
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
		next     = make(chan string)
	)
	for range min(runtime.GOMAXPROCS(0), len(hashes)) {
		wg.Go(func() {
			for h := range next {
				if ctx.Err() != nil {
					continue // drain: the feeder stops too
				}
				v, err := compressVariants(blobs[h])
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = fmt.Errorf("compress: %w", err)
				}
				out[h] = v
				mu.Unlock()
			}
		})
	}
feed:
	for _, h := range hashes {
		select {
		case next <- h:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := cancelled(ctx); err != nil {
		return nil, err
	}
	return out, firstErr
}

// cancelled returns ctx's error, wrapped, when it is done.
func cancelled(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("deploy stopped: %w", err)
	}
	return nil
}

// knownVariants maps the file hashes of a deployment's live version to
// their variants, so a redeploy does not compress unchanged files again.
func (s *Service) knownVariants(dep *core.Record) map[string]map[string]EncodedEntry {
	id := dep.GetString("live_version")
	if id == "" {
		return nil
	}
	ver, err := s.app.FindRecordById(VersionsCollection, id)
	if err != nil {
		return nil
	}
	m, err := ParseManifest([]byte(ver.GetString("manifest")))
	if err != nil {
		return nil
	}
	known := make(map[string]map[string]EncodedEntry, len(m))
	for _, e := range m {
		if len(e.Encoded) > 0 {
			known[e.Hash] = e.Encoded
		}
	}
	return known
}

// ensureVariants checks that the variant blobs reused from the live
// version still exist (touching them, so the collector spares them), and
// compresses again the files whose variants are gone.
func (s *Service) ensureVariants(ctx context.Context, m Manifest, blobs map[string][]byte, known map[string]map[string]EncodedEntry) error {
	checked := map[string]bool{}
	for p, e := range m {
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
			ok, err := s.store.Has(ctx, enc.Hash)
			if err != nil {
				return fmt.Errorf("check blob: %w", err)
			}
			whole = whole && ok
		}
		if whole {
			continue
		}
		fresh, err := compressVariants(blobs[e.Hash])
		if err != nil {
			return fmt.Errorf("compress %s: %w", p, err)
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
