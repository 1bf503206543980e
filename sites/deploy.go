package sites

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/pocketbase/dbx"
	validation "github.com/pocketbase/ozzo-validation/v4"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/security"

	"sitedrop/sites/accounts"
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
	// Protect changes the protection (zero: keeps it), committed with the
	// content, so a site deployed protected is never served without it.
	Protect ProtectionChange
}

// Upload is the content of a deploy: already validated files.
type Upload struct {
	// StorageType is StorageHTML or StorageFiles.
	StorageType string
	Files       []File
	// Memory, when set, is the deploy's memory budget: what a deploy
	// allocates for the content beyond the files themselves (HTML with
	// the submit URL or its head added, the precompressed variants) is
	// reserved from it before it is allocated, and given back when it is
	// dropped. Its error stops the deploy before anything is committed
	// and is returned as it is.
	Memory Memory
	// Release says how the new version is published.
	Release Release
}

// MaxMessageLen is the longest deploy message, in characters (runes).
const MaxMessageLen = 200

// Release says how a deploy publishes its new version: live (the zero
// value) or as a draft, under an alias or not, with a message.
type Release struct {
	// Draft saves the version without making it live: the site keeps
	// serving what it served (nothing, for a new deployment) until the
	// version is promoted; its preview host serves it.
	Draft bool
	// Alias, when set, points the alias of that name at the new version
	// (created if needed), live or draft. A valid alias (ValidateAlias).
	Alias string
	// Message describes the version (at most MaxMessageLen characters).
	Message string
}

// Check refuses a release an anonymous deploy (anon) cannot make, or a
// malformed alias or message: a *FieldError naming the field.
func (r Release) Check(anon bool) error {
	if anon && r.Draft {
		return &FieldError{Field: "draft", Msg: "draft needs an account: an anonymous deploy is always live"}
	}
	if anon && r.Alias != "" {
		return &FieldError{Field: "alias", Msg: "alias needs an account: an anonymous deploy cannot have aliases"}
	}
	if r.Alias != "" {
		if err := ValidateAlias(r.Alias); err != nil {
			return err
		}
	}
	if n := utf8.RuneCountInString(r.Message); n > MaxMessageLen {
		return &FieldError{Field: "message", Msg: fmt.Sprintf("message is too long: at most %d characters", MaxMessageLen)}
	}
	return nil
}

// Memory is a deploy's memory budget (see Upload.Memory).
type Memory interface {
	// Reserve reserves n bytes about to be allocated, waiting for them
	// (for a bounded time); its error stops the deploy.
	Reserve(n int64) error
	// TryReserve reserves n bytes if they are free now, without waiting:
	// what a compression asks for while it holds a compressor.
	TryReserve(n int64) bool
	// Release gives back n reserved bytes the deploy no longer holds:
	// allocated ones (garbage now) or ones never allocated.
	Release(n int64, allocated bool)
}

// reserveMem reserves n bytes of mem (nil: no budget).
func reserveMem(mem Memory, n int64) error {
	if mem == nil || n <= 0 {
		return nil
	}
	return mem.Reserve(n)
}

// tryReserveMem reserves n bytes of mem if they are free now (nil: no
// budget, always).
func tryReserveMem(mem Memory, n int64) bool {
	if mem == nil || n <= 0 {
		return true
	}
	return mem.TryReserve(n)
}

// releaseMem gives n bytes back to mem (nil: no budget).
func releaseMem(mem Memory, n int64, allocated bool) {
	if mem == nil || n <= 0 {
		return
	}
	mem.Release(n, allocated)
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
	// HoldUntilClaimed keeps an anonymous deployment unserved until an
	// account claims it (see FieldAwaitingClaim).
	HoldUntilClaimed bool
	// Prechecked says the caller ran PrecheckCreate for Owner and Slug
	// just before (the API does, before it reads the content), so Create
	// does not run its four queries again; the transaction checks for
	// good either way.
	Prechecked bool
}

// Created is the result of Create.
type Created struct {
	Record *core.Record
	// Version is the new deployment's first version (live unless it was
	// deployed as a draft).
	Version *core.Record
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
	if err := p.Upload.Release.Check(p.Owner == nil); err != nil {
		return nil, err
	}
	// Refuse what the transaction would refuse before any content is
	// written, so refused deploys leave nothing to collect. The
	// transaction checks again: these reads only save the work.
	if !p.Prechecked {
		if err := s.PrecheckCreate(p.Owner, p.Slug); err != nil {
			return nil, err
		}
	}
	if p.ID == "" {
		p.ID = core.GenerateDefaultRandomId() // known before the content: {{SUBMIT_URL}}
	}
	if err := s.cfg.Blocklist.CheckRedirects(p.Upload.Files); err != nil {
		return nil, err
	}
	meta := resolveMeta(nil, p.Meta)
	manifest, blobs, err := buildManifest(ctx, p.Upload, meta, s.submitURL(p.ID), nil, s.cfg.Blocklist.hashScreen())
	if err != nil {
		return nil, err
	}

	s.gcMu.RLock()
	defer s.gcMu.RUnlock()
	deletions, counted := s.storeDeletions() // before the store is asked
	if err := s.writeBlobs(ctx, manifest, blobs, nil); err != nil {
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
		rec.Set(FieldSlug, slug)
		rec.Set(FieldStatus, StatusActive)
		rec.Set(FieldStorageType, p.Upload.StorageType)
		if !p.Upload.Release.Draft {
			rec.Set(FieldLiveVersion, versionID)
		}
		meta.apply(rec)
		p.Meta.Protect.apply(rec)
		if p.Owner != nil {
			rec.Set(FieldOwner, p.Owner.Id)
		} else {
			out.ClaimToken = security.RandomString(40)
			rec.Set(FieldClaimTokenHash, accounts.HashSecret(out.ClaimToken))
			rec.Set(FieldExpiresAt, now.Add(p.AnonTTL))
			rec.Set(FieldAwaitingClaim, p.HoldUntilClaimed)
		}
		// saved with the request's values (who deploys, for the audit
		// log's record hooks), never its cancellation: past this point
		// the deploy commits
		if err := tx.SaveWithContext(context.WithoutCancel(ctx), rec); err != nil {
			return mapSaveError(err)
		}
		v, err := s.saveVersion(ctx, tx, rec, versionID, 1, manifest, meta, p.Upload)
		if err != nil {
			return err
		}
		out.Record, out.Version = rec, v
		return nil
	})
	if err != nil {
		return nil, err
	}
	if counted && !p.Upload.Release.Draft {
		s.verified.remember(out.Record.Id, out.Version, deletions)
	}
	return out, nil
}

// Replace stores the new content and, in one transaction, adds it as the
// deployment's next version and points the deployment at it, with the
// metadata that meta changes. Readers see the old site or the new one; an
// error anywhere leaves the old one live. A cancelled ctx stops it as it
// stops Create.
func (s *Service) Replace(ctx context.Context, dep *core.Record, meta Metadata, up Upload) (*core.Record, error) {
	rec, _, err := s.ReplaceVersion(ctx, dep, meta, up)
	return rec, err
}

// ReplaceVersion is Replace, which also returns the new version. With
// up.Release.Draft the version is saved and the deployment is left as it
// is (its live version, metadata and protection: they change when the
// version is promoted); the alias, if any, moves either way.
func (s *Service) ReplaceVersion(ctx context.Context, dep *core.Record, meta Metadata, up Upload) (*core.Record, *core.Record, error) {
	if err := up.Release.Check(DeploymentOf(dep).OwnerID() == ""); err != nil {
		return nil, nil, err
	}
	// One replace at a time per deployment, merging the metadata over the
	// current record, so two PUTs that each change one field keep both.
	unlock := s.lockDeployment(dep.Id)
	defer unlock()
	if err := cancelled(ctx); err != nil {
		return nil, nil, err // gone while waiting for another replace
	}
	return s.replaceLocked(ctx, dep, meta, up)
}

// replaceLocked is ReplaceVersion with the deployment's lock held.
func (s *Service) replaceLocked(ctx context.Context, dep *core.Record, meta Metadata, up Upload) (*core.Record, *core.Record, error) {
	dep, err := s.app.FindRecordById(DeploymentsCollection, dep.Id)
	if err != nil {
		return nil, nil, ErrNotFound
	}
	if err := refuseTakenDown(dep); err != nil {
		// refused before any content is stored; the record hooks refuse
		// its version in the transaction too (CheckNewVersion)
		return nil, nil, err
	}
	if err := s.cfg.Blocklist.CheckRedirects(up.Files); err != nil {
		return nil, nil, err
	}
	m := resolveMeta(dep, meta)
	live := s.readLive(dep)
	manifest, blobs, err := buildManifest(ctx, up, m, s.submitURL(dep.Id), live.variants(), s.cfg.Blocklist.hashScreen())
	if err != nil {
		return nil, nil, err
	}

	s.gcMu.RLock()
	defer s.gcMu.RUnlock()
	deletions, counted := s.storeDeletions() // before the store is asked
	live.trust(s.sure(dep.Id, live))
	if err := s.ensureVariants(ctx, manifest, blobs, live, up.Memory); err != nil {
		return nil, nil, err
	}
	if err := s.writeBlobs(ctx, manifest, blobs, live); err != nil {
		return nil, nil, err
	}
	if err := cancelled(ctx); err != nil {
		return nil, nil, err // the blobs written are left to the collector
	}

	var out, ver *core.Record
	err = s.app.RunInTransaction(func(tx core.App) error {
		fresh, err := tx.FindRecordById(DeploymentsCollection, dep.Id)
		if err != nil {
			return ErrNotFound
		}
		if err := live.still(ctx, tx, s.store, manifest); err != nil {
			return err
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
		ver, err = s.saveVersion(ctx, tx, fresh, versionID, number, manifest, m, up)
		if err != nil {
			return err
		}
		if !up.Release.Draft {
			fresh.Set(FieldLiveVersion, versionID)
			fresh.Set(FieldStorageType, up.StorageType)
			m.apply(fresh)
			meta.Protect.apply(fresh)
			if err := tx.SaveWithContext(context.WithoutCancel(ctx), fresh); err != nil {
				return mapSaveError(err)
			}
		}
		if err := s.pruneVersions(tx, fresh, versionID); err != nil {
			return err
		}
		out = fresh
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if counted && !up.Release.Draft {
		s.verified.remember(out.Id, ver, deletions)
	}
	return out, ver, nil
}

// saveVersion saves the version versionID of the deployment dep within
// tx, deployed with the settings meta and the storage type of up, and
// published as up.Release says (its message; its alias, pointed at it).
// dep must be the deployment's row as tx has it (just saved, or just
// read, in tx): the save's hooks take it instead of reading it again
// (see DeploymentOfSave).
func (s *Service) saveVersion(ctx context.Context, tx core.App, dep *core.Record, versionID string, number int, m Manifest, meta resolvedMeta, up Upload) (*core.Record, error) {
	depID := dep.Id
	rel := up.Release
	col, err := tx.FindCachedCollectionByNameOrId(VersionsCollection)
	if err != nil {
		return nil, fmt.Errorf("find versions collection: %w", err)
	}
	v := core.NewRecord(col)
	v.Set("id", versionID)
	v.Set(FieldVersionDeployment, depID)
	v.Set(FieldVersionNumber, number)
	v.Set(FieldVersionManifest, m)
	v.Set(FieldVersionFileCount, len(m))
	v.Set(FieldVersionTotalBytes, m.TotalBytes())
	meta.apply(v) // the same field names
	v.Set(FieldVersionStorageType, up.StorageType)
	v.Set(FieldVersionMessage, rel.Message)
	saveCtx := withSavedDeployment(context.WithoutCancel(ctx), v, DeploymentOf(dep)) // see Create
	if err := tx.SaveWithContext(saveCtx, v); err != nil {
		return nil, fmt.Errorf("save version %d: %w", number, err)
	}
	if rel.Alias != "" {
		if err := setAlias(tx, depID, rel.Alias, versionID); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// pruneVersions deletes the versions of dep that the keep rule lets go,
// within tx, after the version newID was saved. It never deletes the live
// version, a version an alias points to, nor the new one; of the others
// it keeps the newest KeepVersions-1 (KeepVersions counts the live one,
// so a deployment without drafts or aliases keeps KeepVersions).
func (s *Service) pruneVersions(tx core.App, dep *core.Record, newID string) error {
	var ids []string
	err := tx.DB().NewQuery("SELECT v.[[id]] FROM {{" + VersionsCollection + "}} v WHERE v.[[deployment]] = {:d} AND v.[[id]] != {:live} AND v.[[id]] != {:new} " +
		"AND NOT EXISTS (SELECT 1 FROM {{" + AliasesCollection + "}} a WHERE a.[[version]] = v.[[id]]) ORDER BY v.[[number]] DESC").
		Bind(dbx.Params{"d": dep.Id, "live": dep.GetString(FieldLiveVersion), "new": newID}).Column(&ids)
	if err != nil {
		return fmt.Errorf("find old versions: %w", err)
	}
	keep := max(s.cfg.KeepVersions-1, 0)
	if len(ids) <= keep {
		return nil
	}
	for _, id := range ids[keep:] {
		v, err := tx.FindRecordById(VersionsCollection, id)
		if err != nil {
			return fmt.Errorf("find old version: %w", err)
		}
		if err := tx.Delete(v); err != nil {
			return fmt.Errorf("prune version: %w", err)
		}
	}
	return nil
}

// mapSaveError turns PocketBase's unique-slug validation error into
// ErrSlugTaken and passes other errors through.
func mapSaveError(err error) error {
	var verrs validation.Errors
	if errors.As(err, &verrs) {
		if ve, ok := verrs[FieldSlug].(validation.Error); ok && ve.Code() == "validation_not_unique" {
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
		r = resolvedMeta{rec.GetString(FieldTitle), rec.GetString(FieldDescription), rec.GetString(FieldFavicon), rec.GetBool(FieldIsSPA)}
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

// apply sets r on rec, a deployment or a version (see versionSettings).
func (r resolvedMeta) apply(rec *core.Record) {
	rec.Set(FieldTitle, r.title)
	rec.Set(FieldDescription, r.description)
	rec.Set(FieldFavicon, r.favicon)
	rec.Set(FieldIsSPA, r.isSPA)
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
