// Package usage is what an account uses of the instance, beside its
// plan's limits: its sites, the storage their versions keep (see
// sites.StorageBytes for the rule) and what they served over the last
// Days days (from the analytics' daily rows, statsdb); and, for
// administrators, the accounts and the sites that served the most.
//
//	u := usage.New(app, deploys)
//	acc, err := u.Usage(owner, time.Now())       // the account page, GET /usage
//	top, err := u.TopSites(20, usage.Since(now)) // GET /admin/usage
package usage

import (
	"fmt"
	"sync"
	"time"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
	"sitedrop/sites/accounts"
	"sitedrop/sites/analytics/statsdb"
)

// Days is the period usage counts traffic over: the last Days UTC days,
// today included.
const Days = 30

// MaxTop is the most entries a top list holds (GET /admin/usage?top=).
const MaxTop = 100

// Since is the first UTC day of the period that ends on now's day.
func Since(now time.Time) time.Time {
	return now.UTC().Truncate(24*time.Hour).AddDate(0, 0, 1-Days)
}

// Limits are a plan's limits, beside what the account uses.
type Limits struct {
	// Sites is how many deployments the plan allows.
	Sites int
	// VersionsPerSite is how many versions of each site are kept.
	VersionsPerSite int
}

// Account is what one account uses.
type Account struct {
	Owner string
	Email string
	// Plan is the account's plan (sites.PlanFree for none).
	Plan   string
	Limits Limits
	// Sites is how many deployments it owns.
	Sites int
	// StorageBytes is sites.StorageBytes of the account.
	StorageBytes int64
	// PageViews and BytesServed are the period's, from Since to today.
	PageViews   int64
	BytesServed int64
	Since       time.Time
}

// Site is one deployment's traffic over the period.
type Site struct {
	ID          string
	Slug        string
	Owner       string
	PageViews   int64
	BytesServed int64
}

// storageCacheMax bounds the accounts whose storage a Service keeps;
// past it the cache starts afresh.
const storageCacheMax = 10000

// storageTTL is how long a kept storage count is trusted even while its
// stamp holds.
const storageTTL = time.Hour

// Service reads usage from app's database; deploys gives the plans'
// limits. It keeps each account's storage against its
// sites.StorageStamp, so that a page load reads the manifests only when
// the account's versions changed (sites.StorageBytes costs a parse of
// every manifest entry the account keeps; the stamp, one aggregate).
type Service struct {
	app     core.App
	deploys *sites.Service

	mu      sync.Mutex
	storage map[string]storageEntry
}

// storageEntry is an account's storage as counted under stamp, at at.
type storageEntry struct {
	stamp sites.StorageStamp
	bytes int64
	at    time.Time
}

// New returns a Service.
func New(app core.App, deploys *sites.Service) *Service {
	return &Service{app: app, deploys: deploys, storage: map[string]storageEntry{}}
}

// storageBytes is sites.StorageBytes of owner, recounted only when the
// account's StorageStamp changed or its count is older than storageTTL.
func (s *Service) storageBytes(owner string, now time.Time) (int64, error) {
	stamp, err := sites.StorageStampOf(s.app, owner)
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	e, ok := s.storage[owner]
	s.mu.Unlock()
	if ok && e.stamp == stamp && now.Sub(e.at) < storageTTL {
		return e.bytes, nil
	}
	n, err := sites.StorageBytes(s.app, owner)
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	if len(s.storage) >= storageCacheMax {
		clear(s.storage)
	}
	s.storage[owner] = storageEntry{stamp: stamp, bytes: n, at: now}
	s.mu.Unlock()
	return n, nil
}

// Usage is what owner (a users record) uses, traffic counted from
// Since(now).
func (s *Service) Usage(owner *core.Record, now time.Time) (Account, error) {
	plan := accounts.UserOf(owner).Plan()
	if plan == "" {
		plan = sites.PlanFree
	}
	out := Account{
		Owner: owner.Id, Email: owner.Email(), Plan: plan, Since: Since(now),
		Limits: Limits{Sites: s.deploys.SlotLimit(plan), VersionsPerSite: s.deploys.KeepVersions()},
	}
	n, err := s.app.CountRecords(sites.DeploymentsCollection, dbx.HashExp{sites.FieldOwner: owner.Id})
	if err != nil {
		return Account{}, fmt.Errorf("count the sites of %s: %w", owner.Id, err)
	}
	out.Sites = int(n)
	if out.StorageBytes, err = s.storageBytes(owner.Id, now); err != nil {
		return Account{}, err
	}
	t, err := statsdb.OwnerTraffic(s.app, owner.Id, out.Since)
	if err != nil {
		return Account{}, err
	}
	out.PageViews, out.BytesServed = t.PageViews, t.Bytes
	return out, nil
}

// TopSites is the n sites (at most MaxTop) that served the most bytes
// from since's day on, most first.
func (s *Service) TopSites(n int, since time.Time) ([]Site, error) {
	ts, err := statsdb.TopSites(s.app, min(n, MaxTop), since)
	if err != nil {
		return nil, err
	}
	out := make([]Site, 0, len(ts))
	for _, t := range ts {
		rec, err := s.app.FindRecordById(sites.DeploymentsCollection, t.Key)
		if err != nil {
			continue // deleted since the sum: its rows go with it
		}
		d := sites.DeploymentOf(rec)
		out = append(out, Site{ID: rec.Id, Slug: d.Slug(), Owner: d.OwnerID(), PageViews: t.PageViews, BytesServed: t.Bytes})
	}
	return out, nil
}

// TopAccounts is the usage of the n accounts (at most MaxTop) whose
// sites served the most bytes from Since(now) on, most first.
func (s *Service) TopAccounts(n int, now time.Time) ([]Account, error) {
	ts, err := statsdb.TopOwners(s.app, min(n, MaxTop), Since(now))
	if err != nil {
		return nil, err
	}
	out := make([]Account, 0, len(ts))
	for _, t := range ts {
		owner, err := s.app.FindRecordById(accounts.UsersCollection, t.Key)
		if err != nil {
			continue // deleted since the sum
		}
		a, err := s.Usage(owner, now)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}
