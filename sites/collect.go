package sites

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"
)

// PurgeExpired deletes anonymous deployments whose expiry is before now,
// in batches, and returns how many it deleted. They are already offline
// (the server checks the expiry on every request); this frees the rows and,
// through the collector, their content.
func (s *Service) PurgeExpired(now time.Time) (int, error) {
	total := 0
	for {
		recs, err := s.app.FindRecordsByFilter(DeploymentsCollection,
			FieldOwner+" = '' && "+FieldExpiresAt+" != '' && "+FieldExpiresAt+" <= {:now}", FieldExpiresAt, 200, 0,
			dbx.Params{"now": DBTime(now)})
		if err != nil {
			return total, fmt.Errorf("find expired deployments: %w", err)
		}
		for _, r := range recs {
			if err := s.app.Delete(r); err != nil {
				return total, fmt.Errorf("delete expired %s: %w", r.GetString(FieldSlug), err)
			}
			total++
		}
		if len(recs) < 200 {
			return total, nil
		}
	}
}

// Collected is what one run of CollectGarbage did.
type Collected struct {
	// Removed is how many unreferenced blobs were deleted.
	Removed int
	// Deferred is how many unreferenced blobs were kept because they are
	// younger than the grace period; a later run should remove them.
	Deferred int
}

// CollectGarbage deletes blobs that no version references and that are
// older than grace. The grace period protects blobs written by a deploy in
// another process; deploys in this process are protected by gcMu.
func (s *Service) CollectGarbage(ctx context.Context, grace time.Duration) (Collected, error) {
	var out Collected
	refs, err := s.referencedHashes()
	if err != nil {
		return out, err
	}
	cutoff := time.Now().Add(-grace)
	var candidates []string
	err = s.store.Walk(ctx, func(hash string, mod time.Time) error {
		if _, ok := refs[hash]; ok {
			return nil
		}
		if mod.Before(cutoff) {
			candidates = append(candidates, hash)
		} else {
			out.Deferred++
		}
		return nil
	})
	if err != nil {
		return out, fmt.Errorf("walk blobs: %w", err)
	}
	if len(candidates) == 0 {
		return out, nil
	}

	s.gcMu.Lock()
	defer s.gcMu.Unlock()
	// Versions committed since the first look may reference a candidate.
	refs, err = s.referencedHashes()
	if err != nil {
		return out, err
	}
	for _, h := range candidates {
		if _, ok := refs[h]; ok {
			continue
		}
		if err := s.store.Delete(ctx, h); err != nil {
			return out, err
		}
		out.Removed++
	}
	return out, nil
}

// manifestBatch is how many versions referencedHashes reads per query.
var manifestBatch = 500

// referencedHashes is the set of blob hashes named by any version. It pages
// by id (keyset), so versions deleted while it reads cannot shift a page
// and hide another version's manifest.
func (s *Service) referencedHashes() (map[string]struct{}, error) {
	refs := map[string]struct{}{}
	after := ""
	for {
		var rows []struct {
			ID       string `db:"id"`
			Manifest string `db:"manifest"`
		}
		err := s.app.DB().NewQuery("SELECT [[id]], [[manifest]] FROM {{versions}} WHERE [[id]] > {:after} ORDER BY [[id]] LIMIT {:l}").
			Bind(dbx.Params{"after": after, "l": manifestBatch}).All(&rows)
		if err != nil {
			return nil, fmt.Errorf("read manifests: %w", err)
		}
		for _, r := range rows {
			m, err := ParseManifest([]byte(r.Manifest))
			if err != nil {
				return nil, err
			}
			for _, e := range m {
				e.Hashes(func(h string) { refs[h] = struct{}{} })
			}
		}
		if len(rows) < manifestBatch {
			return refs, nil
		}
		after = rows[len(rows)-1].ID
	}
}

// LoadSite reads what the site server needs to serve slug: the deployment
// and the manifest of its live version. It returns ErrNotFound when there is
// no such deployment. slug may also be a preview host's label
// ("v12--my-site", "staging--my-site"; see ParsePreviewLabel): then the
// manifest is that version's (see LoadPreview).
func (s *Service) LoadSite(slug string) (*Site, error) {
	if strings.Contains(slug, PreviewSep) {
		return LoadPreview(s.app, slug)
	}
	rec, err := s.app.FindFirstRecordByData(DeploymentsCollection, FieldSlug, slug)
	if err != nil {
		return movedSite(s.app, slug, "", time.Now()) // a renamed site's old slug, or ErrNotFound
	}
	return siteFromRecord(s.app, rec)
}

func siteFromRecord(app core.App, rec *core.Record) (*Site, error) {
	site := &Site{
		ID:            rec.Id,
		Slug:          rec.GetString(FieldSlug),
		Status:        rec.GetString(FieldStatus),
		Paused:        rec.GetBool(FieldPaused),
		AwaitingClaim: rec.GetBool(FieldAwaitingClaim),
		TakenDown:     rec.GetString(FieldTakedownReason),
		IsSPA:         rec.GetBool(FieldIsSPA),
		VersionID:     rec.GetString(FieldLiveVersion),
		Protection:    ProtectionOf(rec),
		Files:         Manifest{},
	}
	if exp := rec.GetDateTime(FieldExpiresAt); !exp.IsZero() {
		site.ExpiresAt = exp.Time()
	}
	if site.VersionID == "" {
		return site, nil
	}
	m, err := liveManifest(app, rec)
	if errors.Is(err, sql.ErrNoRows) {
		// deleted between the two reads: the site is going away
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	site.Files = m
	return site, nil
}
