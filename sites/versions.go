package sites

import (
	"database/sql"
	"errors"
	"fmt"
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
}

// ListVersions returns the kept versions of dep, newest first.
func (s *Service) ListVersions(dep *core.Record) ([]VersionInfo, error) {
	recs, err := s.app.FindRecordsByFilter(VersionsCollection, FieldVersionDeployment+" = {:d}", "-"+FieldVersionNumber, 0, 0,
		dbx.Params{"d": dep.Id})
	if err != nil {
		return nil, fmt.Errorf("list versions: %w", err)
	}
	live := dep.GetString(FieldLiveVersion)
	out := make([]VersionInfo, 0, len(recs))
	for _, v := range recs {
		out = append(out, VersionInfo{
			Number:     v.GetInt(FieldVersionNumber),
			Created:    v.GetDateTime(FieldCreated).Time(),
			FileCount:  v.GetInt(FieldVersionFileCount),
			TotalBytes: int64(v.GetInt(FieldVersionTotalBytes)),
			Live:       v.Id == live,
		})
	}
	return out, nil
}

// Rollback makes version number of dep live again, in one transaction:
// readers see the current site or that version, never a mix. Like a PUT
// it updates the record (its updated time, the deployment.updated
// webhooks, the site cache); the metadata fields stay as they are (the
// version's HTML carries the head tags it was deployed with). The
// versions are not renumbered: the next deploy gets the next number.
func (s *Service) Rollback(dep *core.Record, number int) (*core.Record, error) {
	unlock := s.lockDeployment(dep.Id)
	defer unlock()
	var out *core.Record
	err := s.app.RunInTransaction(func(tx core.App) error {
		fresh, err := tx.FindRecordById(DeploymentsCollection, dep.Id)
		if err != nil {
			return ErrNotFound
		}
		v, err := tx.FindFirstRecordByFilter(VersionsCollection, FieldVersionDeployment+" = {:d} && "+FieldVersionNumber+" = {:n}",
			dbx.Params{"d": fresh.Id, "n": number})
		if err != nil {
			return ErrVersionNotFound
		}
		fresh.Set(FieldLiveVersion, v.Id)
		if err := tx.Save(fresh); err != nil {
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
	ver, err := app.FindRecordById(VersionsCollection, id)
	if err != nil {
		return nil, fmt.Errorf("find live version of %s: %w", dep.GetString(FieldSlug), err)
	}
	return ParseManifest([]byte(ver.GetString(FieldVersionManifest)))
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
