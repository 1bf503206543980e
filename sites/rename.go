package sites

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"
)

// Renaming a site (issue 30). A deployment's slug may change: its old
// slug is then kept for it for SlugRedirectTTL, during which the old host
// (and the old preview hosts, v<N>--<old> and <alias>--<old>) answer 301
// to the same path on the current host, and no other deployment can take
// the old slug; then it is freed. Renaming a site back to one of its own
// kept slugs takes it back at once. The bookkeeping is FollowRename, run
// by the record hooks in the transaction of every save, so the API, the
// pages, MCP and the admin dashboard rename alike.

// SlugRedirectsCollection holds the old slugs of renamed deployments.
const SlugRedirectsCollection = "slug_redirects"

// The fields of the slug_redirects collection.
const (
	FieldRedirectSlug       = "slug"
	FieldRedirectDeployment = "deployment"
	FieldRedirectExpiresAt  = "expires_at"
)

// SlugRedirectTTL is how long a renamed site's old slug redirects to it
// (and stays its own).
const SlugRedirectTTL = 30 * 24 * time.Hour

// SlugRedirect is a record of the slug_redirects collection: an old slug
// of a deployment, kept for it until it expires.
type SlugRedirect struct {
	core.BaseRecordProxy
}

// SlugRedirectOf wraps rec, a slug_redirects record (nil for nil).
func SlugRedirectOf(rec *core.Record) *SlugRedirect {
	if rec == nil {
		return nil
	}
	r := &SlugRedirect{}
	r.SetProxyRecord(rec)
	return r
}

// Slug is the old slug.
func (r *SlugRedirect) Slug() string { return r.GetString(FieldRedirectSlug) }

// DeploymentID is the deployment the old slug now leads to.
func (r *SlugRedirect) DeploymentID() string { return r.GetString(FieldRedirectDeployment) }

// ExpiresAt is when the old slug is freed.
func (r *SlugRedirect) ExpiresAt() time.Time { return r.GetDateTime(FieldRedirectExpiresAt).Time() }

// Expired reports whether the old slug is free at now.
func (r *SlugRedirect) Expired(now time.Time) bool { return !r.ExpiresAt().After(now) }

// FindSlugRedirect returns the unexpired redirect of slug at now, or an
// error that is ErrNotFound.
func FindSlugRedirect(app core.App, slug string, now time.Time) (*SlugRedirect, error) {
	rec, err := app.FindFirstRecordByData(SlugRedirectsCollection, FieldRedirectSlug, slug)
	if err != nil {
		return nil, fmt.Errorf("redirect of %q: %w", slug, errors.Join(ErrNotFound, err))
	}
	r := SlugRedirectOf(rec)
	if r.Expired(now) {
		return nil, fmt.Errorf("redirect of %q expired: %w", slug, ErrNotFound)
	}
	return r, nil
}

// OldSlugs returns the unexpired old slugs of the deployment depID, the
// newest rename first.
func OldSlugs(app core.App, depID string, now time.Time) ([]*SlugRedirect, error) {
	recs, err := app.FindRecordsByFilter(SlugRedirectsCollection,
		FieldRedirectDeployment+" = {:d} && "+FieldRedirectExpiresAt+" > {:now}", "-"+FieldRedirectExpiresAt, 0, 0,
		dbx.Params{"d": depID, "now": DBTime(now)})
	if err != nil {
		return nil, fmt.Errorf("old slugs of %s: %w", depID, err)
	}
	out := make([]*SlugRedirect, len(recs))
	for i, r := range recs {
		out[i] = SlugRedirectOf(r)
	}
	return out, nil
}

// RedirectSlugs returns every kept old slug (expired ones included, until
// they are purged), for the publisher's full reconcile.
func RedirectSlugs(app core.App) ([]string, error) {
	var slugs []string
	q := app.DB().Select(FieldRedirectSlug).From(SlugRedirectsCollection)
	if err := q.Column(&slugs); err != nil {
		return nil, fmt.Errorf("list old slugs: %w", err)
	}
	return slugs, nil
}

// FindServedDeployment returns the deployment a site host's slug serves:
// the one named slug, or the one a renamed slug still leads to at now.
// Either way an error is ErrNotFound.
func FindServedDeployment(app core.App, slug string, now time.Time) (*Deployment, error) {
	dep, err := FindDeploymentBySlug(app, slug)
	if err == nil {
		return dep, nil
	}
	r, rerr := FindSlugRedirect(app, slug, now)
	if rerr != nil {
		return nil, err
	}
	return FindDeployment(app, r.DeploymentID())
}

// freeSlugFor makes slug free for the deployment depID ("" for a new one)
// inside tx: a redirect of another deployment that has not expired takes
// it (ErrSlugTaken); an expired one, or one of depID's own (a site
// renamed back), is deleted.
func freeSlugFor(tx core.App, slug, depID string, now time.Time) error {
	rec, err := tx.FindFirstRecordByData(SlugRedirectsCollection, FieldRedirectSlug, slug)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("look up old slug %s: %w", slug, err)
	}
	r := SlugRedirectOf(rec)
	if !r.Expired(now) && (depID == "" || r.DeploymentID() != depID) {
		return ErrSlugTaken
	}
	if err := tx.Delete(rec); err != nil {
		return fmt.Errorf("free old slug %s: %w", slug, err)
	}
	return nil
}

// slugKept reports whether slug is an unexpired old slug of a deployment
// other than depID ("": of any).
func slugKept(app core.App, slug, depID string, now time.Time) bool {
	r, err := FindSlugRedirect(app, slug, now)
	return err == nil && (depID == "" || r.DeploymentID() != depID)
}

// FollowRename is the bookkeeping of a deployment's save, inside its
// transaction tx (the record hooks run it for every writer): a new or
// changed slug must not be another deployment's kept old slug
// (ErrSlugTaken), and a changed one keeps the old slug for the
// deployment for SlugRedirectTTL from now.
func FollowRename(tx core.App, rec *core.Record, now time.Time) error {
	dep := DeploymentOf(rec)
	slug := dep.Slug()
	if !dep.IsNew() && dep.Original().Slug() == slug {
		return nil
	}
	depID := ""
	if !dep.IsNew() {
		depID = dep.Id
	}
	if err := freeSlugFor(tx, slug, depID, now); err != nil {
		return err
	}
	if dep.IsNew() {
		return nil
	}
	old := dep.Original().Slug()
	if old == "" {
		return nil
	}
	col, err := tx.FindCachedCollectionByNameOrId(SlugRedirectsCollection)
	if err != nil {
		return fmt.Errorf("find %s collection: %w", SlugRedirectsCollection, err)
	}
	r := core.NewRecord(col)
	r.Set(FieldRedirectSlug, old)
	r.Set(FieldRedirectDeployment, dep.Id)
	r.Set(FieldRedirectExpiresAt, now.Add(SlugRedirectTTL))
	if err := tx.Save(r); err != nil {
		return fmt.Errorf("keep old slug %s: %w", old, err)
	}
	return nil
}

// Rename changes the slug of the deployment rec to slug, under the slug
// rules of a new deployment: a *SlugError for an invalid slug,
// ErrSlugReserved, ErrSlugTaken when another deployment has it or keeps
// it as an old slug. The old slug redirects to the new one for
// SlugRedirectTTL (see FollowRename). Renaming to the current slug
// changes nothing. It returns the saved record. ctx is the caller's
// request (the audit log names who renamed from it).
func (s *Service) Rename(ctx context.Context, rec *core.Record, slug string) (*core.Record, error) {
	if err := ValidateSlug(slug); err != nil {
		return nil, err
	}
	if s.IsReserved(slug) {
		return nil, ErrSlugReserved
	}
	var out *core.Record
	err := s.app.RunInTransaction(func(tx core.App) error {
		fresh, err := tx.FindRecordById(DeploymentsCollection, rec.Id)
		if err != nil {
			return ErrNotFound
		}
		if err := refuseTakenDown(fresh); err != nil {
			return err
		}
		if DeploymentOf(fresh).Slug() == slug {
			out = fresh
			return nil
		}
		if err := s.takeSlug(tx, slug, time.Now()); err != nil {
			return err
		}
		DeploymentOf(fresh).SetSlug(slug)
		if err := tx.SaveWithContext(context.WithoutCancel(ctx), fresh); err != nil { // see Create
			return mapSaveError(err)
		}
		out = fresh
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// PurgeExpiredRedirects deletes the old slugs that expired by now (their
// hosts stop redirecting and the slugs are free), and returns how many.
func (s *Service) PurgeExpiredRedirects(now time.Time) (int, error) {
	total := 0
	for {
		recs, err := s.app.FindRecordsByFilter(SlugRedirectsCollection,
			FieldRedirectExpiresAt+" <= {:now}", FieldRedirectExpiresAt, 200, 0, dbx.Params{"now": DBTime(now)})
		if err != nil {
			return total, fmt.Errorf("find expired old slugs: %w", err)
		}
		for _, r := range recs {
			if err := s.app.Delete(r); err != nil {
				return total, fmt.Errorf("delete expired old slug %s: %w", r.GetString(FieldRedirectSlug), err)
			}
			total++
		}
		if len(recs) < 200 {
			return total, nil
		}
	}
}

// movedSite is what serving the old slug (a host label: the slug, or a
// preview label of it) of a renamed deployment takes: a Site with no
// files that MovedTo the deployment's current slug, live until the
// redirect expires. ErrNotFound when label names no kept old slug.
func movedSite(app core.App, slug, preview string, now time.Time) (*Site, error) {
	r, err := FindSlugRedirect(app, slug, now)
	if err != nil {
		return nil, err
	}
	dep, err := FindDeployment(app, r.DeploymentID())
	if err != nil {
		return nil, err
	}
	return &Site{
		ID:        dep.Id,
		Slug:      slug,
		Status:    StatusActive,
		ExpiresAt: r.ExpiresAt(),
		Preview:   preview,
		MovedTo:   dep.Slug(),
		// a taken-down site's old slug answers the takedown page too
		TakenDown: dep.TakedownReason(),
		Files:     Manifest{},
	}, nil
}
