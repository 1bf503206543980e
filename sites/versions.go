package sites

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"
)

// ErrVersionNotFound: the deployment has no (kept) version with that
// number.
var ErrVersionNotFound = errors.New("version not found")

// VersionInfo describes one kept version of a deployment.
type VersionInfo struct {
	Number     int
	Created    time.Time
	FileCount  int
	TotalBytes int64
	// Live tells whether the site serves this version now.
	Live bool
	// Message is the deploy's message ("" for none).
	Message string
	// Aliases are the names of the aliases that point at the version, by
	// name.
	Aliases []string
}

// ListVersions returns the kept versions of dep, newest first.
func (s *Service) ListVersions(dep *core.Record) ([]VersionInfo, error) {
	recs, err := s.app.FindRecordsByFilter(VersionsCollection, FieldVersionDeployment+" = {:d}", "-"+FieldVersionNumber, 0, 0,
		dbx.Params{"d": dep.Id})
	if err != nil {
		return nil, fmt.Errorf("list versions: %w", err)
	}
	aliases, err := listAliases(s.app, dep.Id)
	if err != nil {
		return nil, err
	}
	byNumber := map[int][]string{}
	for _, a := range aliases {
		byNumber[a.Version] = append(byNumber[a.Version], a.Name)
	}
	live := dep.GetString(FieldLiveVersion)
	out := make([]VersionInfo, 0, len(recs))
	for _, v := range recs {
		n := v.GetInt(FieldVersionNumber)
		names := byNumber[n]
		if names == nil {
			names = []string{}
		}
		out = append(out, VersionInfo{
			Number:     n,
			Created:    v.GetDateTime(FieldCreated).Time(),
			FileCount:  v.GetInt(FieldVersionFileCount),
			TotalBytes: int64(v.GetInt(FieldVersionTotalBytes)),
			Live:       v.Id == live,
			Message:    v.GetString(FieldVersionMessage),
			Aliases:    names,
		})
	}
	return out, nil
}

// FindVersionByNumber returns the version number n of the deployment
// depID, or an error that is ErrNotFound (and ErrVersionNotFound) when it
// has no such version (never had it, or it was pruned).
func FindVersionByNumber(app core.App, depID string, n int) (*core.Record, error) {
	v, err := app.FindFirstRecordByFilter(VersionsCollection, FieldVersionDeployment+" = {:d} && "+FieldVersionNumber+" = {:n}",
		dbx.Params{"d": depID, "n": n})
	if err != nil {
		return nil, fmt.Errorf("version %d of %s: %w", n, depID, errors.Join(ErrNotFound, ErrVersionNotFound, err))
	}
	return v, nil
}

// VersionFile is one file of a version: its path in the site, its size
// in bytes and the SHA-256 (hex) of the bytes served.
type VersionFile struct {
	Path string
	Size int64
	Hash string
}

// VersionFiles returns the files of dep's version number n, by path; an
// error that is ErrVersionNotFound when it is not kept.
func (s *Service) VersionFiles(dep *core.Record, n int) ([]VersionFile, error) {
	m, err := s.versionManifest(dep, n)
	if err != nil {
		return nil, err
	}
	out := make([]VersionFile, 0, len(m))
	for p, e := range m {
		out = append(out, VersionFile{Path: p, Size: e.Size, Hash: e.Hash})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// versionManifest is the manifest of dep's version number n.
func (s *Service) versionManifest(dep *core.Record, n int) (Manifest, error) {
	v, err := FindVersionByNumber(s.app, dep.Id, n)
	if err != nil {
		return nil, err
	}
	return ParseManifest([]byte(v.GetString(FieldVersionManifest)))
}

// DiffEntry is one path of a Diff: its size in the version compared from
// (From: 0 for an added file) and in the one compared to (To: 0 for a
// removed file).
type DiffEntry struct {
	Path     string
	From, To int64
}

// Diff is what changed from one version to another: the paths only the
// later has (Added), those whose content differs (Changed) and those
// only the earlier has (Removed), each by path.
type Diff struct {
	Added, Changed, Removed []DiffEntry
}

// DiffVersions compares dep's version number from with number to; an
// error that is ErrVersionNotFound when either is not kept. A file is
// changed when the bytes served differ (their hashes).
func (s *Service) DiffVersions(dep *core.Record, from, to int) (Diff, error) {
	a, err := s.versionManifest(dep, from)
	if err != nil {
		return Diff{}, err
	}
	b, err := s.versionManifest(dep, to)
	if err != nil {
		return Diff{}, err
	}
	return diffManifests(a, b), nil
}

// diffManifests compares manifest a (earlier) with b (later).
func diffManifests(a, b Manifest) Diff {
	d := Diff{Added: []DiffEntry{}, Changed: []DiffEntry{}, Removed: []DiffEntry{}}
	for p, eb := range b {
		ea, ok := a[p]
		switch {
		case !ok:
			d.Added = append(d.Added, DiffEntry{Path: p, To: eb.Size})
		case ea.Hash != eb.Hash:
			d.Changed = append(d.Changed, DiffEntry{Path: p, From: ea.Size, To: eb.Size})
		}
	}
	for p, ea := range a {
		if _, ok := b[p]; !ok {
			d.Removed = append(d.Removed, DiffEntry{Path: p, From: ea.Size})
		}
	}
	for _, l := range [][]DiffEntry{d.Added, d.Changed, d.Removed} {
		sort.Slice(l, func(i, j int) bool { return l[i].Path < l[j].Path })
	}
	return d
}

// Rollback makes version number of dep live again: Promote, the name
// the dashboard and POST /deploy/{id}/rollback use.
func (s *Service) Rollback(ctx context.Context, dep *core.Record, number int) (*core.Record, error) {
	return s.Promote(ctx, dep, number)
}

// Promote makes version number of dep live (a draft, or an earlier
// version), in one transaction: readers see the current site or that
// version, never a mix. The site takes the settings the version was
// deployed with (SPA, title, description, favicon, storage type: see
// FollowLiveVersion), so it serves what the version's preview served.
// Like a PUT it updates the record (its updated time, the
// deployment.updated webhooks, the site cache). Aliases do not move. The versions are not renumbered: the next deploy
// gets the next number. A version holding content blocked since it was
// deployed is refused with a *BlockedContentError, as its deploy would be.
// ctx is the caller's request (the audit log names who moved it from it).
func (s *Service) Promote(ctx context.Context, dep *core.Record, number int) (*core.Record, error) {
	unlock := s.lockDeployment(dep.Id)
	defer unlock()
	var out *core.Record
	err := s.app.RunInTransaction(func(tx core.App) error {
		fresh, err := tx.FindRecordById(DeploymentsCollection, dep.Id)
		if err != nil {
			return ErrNotFound
		}
		if err := refuseTakenDown(fresh); err != nil {
			return err
		}
		v, err := FindVersionByNumber(tx, fresh.Id, number)
		if err != nil {
			return err
		}
		// content blocked since it was deployed is not served again
		if err := s.cfg.Blocklist.checkVersion(v); err != nil {
			return err
		}
		fresh.Set(FieldLiveVersion, v.Id)
		// its settings too: the record hooks apply the same rule to every
		// writer; here it holds without them
		if err := FollowLiveVersion(tx, fresh); err != nil {
			return err
		}
		if err := tx.SaveWithContext(context.WithoutCancel(ctx), fresh); err != nil { // see Create
			return fmt.Errorf("switch to version %d: %w", number, err)
		}
		out = fresh
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// liveManifest is the manifest of dep's live version; an error wrapping
// sql.ErrNoRows when that version does not exist (none is live, or it
// was deleted since dep was read).
func liveManifest(app core.App, dep *core.Record) (Manifest, error) {
	id := dep.GetString(FieldLiveVersion)
	if id == "" {
		return nil, fmt.Errorf("%s has no live version: %w", dep.GetString(FieldSlug), sql.ErrNoRows)
	}
	raw, err := manifestBytes(app, id)
	if err != nil {
		return nil, fmt.Errorf("find live version of %s: %w", dep.GetString(FieldSlug), err)
	}
	return ParseManifest(raw)
}

// manifestBytes reads the manifest of the version id as stored; an error
// wrapping sql.ErrNoRows when there is no such version. The column alone,
// the bytes SQLite gives: a record would copy the manifest (tens of KB
// for 1000 files) three times before a parse, and read the other fields
// for nothing.
func manifestBytes(app core.App, id string) ([]byte, error) {
	var raw []byte
	err := app.DB().Select(FieldVersionManifest).From(VersionsCollection).
		Where(dbx.HashExp{"id": id}).Limit(1).Row(&raw)
	if err != nil {
		return nil, fmt.Errorf("read manifest of version %s: %w", id, err)
	}
	return raw, nil
}

// LiveHashes calls fn with every blob hash that the live versions of
// owner's deployments name (files, the bytes clients sent, variants),
// until fn returns false: blobs the store holds, since the collector
// spares what a version names. It is the index POST /blobs/missing answers
// from before it asks a store where each question is a request.
func (s *Service) LiveHashes(owner *core.Record, fn func(hash string) bool) error {
	deps, err := s.ListOwned(owner)
	if err != nil {
		return err
	}
	for _, dep := range deps {
		m, err := liveManifest(s.app, dep)
		if errors.Is(err, sql.ErrNoRows) {
			continue // none live
		}
		if err != nil {
			return err
		}
		more := true
		for _, e := range m {
			e.Hashes(func(h string) {
				if more {
					more = fn(h)
				}
			})
			if !more {
				return nil
			}
		}
	}
	return nil
}

// FollowLiveVersion is the lifecycle rule that keeps a deployment's
// settings (SPA, title, description, favicon, storage type) and its live
// version's the same, whichever writer saves the deployment (the API, the
// settings page, the admin dashboard): a live version switched (a promote,
// a rollback, from the API or the dashboard) brings its own settings,
// except those the same save sets; a setting changed without a new
// version is the live version's too, so its preview serves it as the
// site does and promoting it again keeps it. app may be a transaction;
// rec is the deployment about to be saved (its Original the saved one).
func FollowLiveVersion(app core.App, rec *core.Record) error {
	live := rec.GetString(FieldLiveVersion)
	if live == "" || rec.IsNew() {
		return nil
	}
	// Only the settings' columns are read and written: a version record
	// carries its manifest, which a large site makes large, and every
	// save of its deployment passes here.
	cols := make([]string, len(versionSettings))
	for i, f := range versionSettings {
		cols[i] = "[[" + f + "]]"
	}
	row := dbx.NullStringMap{}
	err := app.DB().Select(cols...).From(VersionsCollection).Where(dbx.HashExp{"id": live}).Limit(1).One(row)
	if err != nil {
		return nil // refused by the live_version rule, or gone
	}
	v, err := app.FindCollectionByNameOrId(VersionsCollection)
	if err != nil {
		return fmt.Errorf("find versions collection: %w", err)
	}
	ver := core.NewRecord(v)
	ver.Load(nullStrings(row))
	orig := rec.Original()
	switched := live != orig.GetString(FieldLiveVersion)
	update := dbx.Params{}
	for _, f := range versionSettings {
		switch {
		case switched && rec.Get(f) == orig.Get(f):
			rec.Set(f, ver.Get(f)) // not set by this save: the version's
		case ver.Get(f) != rec.Get(f):
			update[f] = rec.Get(f)
		}
	}
	if len(update) == 0 {
		return nil
	}
	if _, err := app.DB().Update(VersionsCollection, update, dbx.HashExp{"id": live}).Execute(); err != nil {
		return fmt.Errorf("keep the live version's settings: %w", err)
	}
	return nil
}

// nullStrings is a row's columns as Record.Load takes them: NULL as
// absent, the rest as their text, which the fields normalise.
func nullStrings(row dbx.NullStringMap) map[string]any {
	out := make(map[string]any, len(row))
	for k, v := range row {
		if v.Valid {
			out[k] = v.String
		}
	}
	return out
}
