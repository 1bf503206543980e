package domains

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
)

// Custom domains on the request path: a host that is a verified custom
// domain serves its deployment as the slug host does; www.<apex> answers
// 301 to the apex when both are verified on the same deployment; a
// domain that is claimed but not verified answers 404. The Table of
// routes is held in memory and loaded again after any change to a domain,
// a deployment's slug or a deployment's deletion (the caller's record
// hooks call Invalidate; MovesRoutes tells which deployment saves do).

// Route is what a custom domain's requests get.
type Route struct {
	// Slug is the site served, "" when the domain is not verified.
	Slug string
	// Apex, for www.<apex>, is where it redirects.
	Apex string
}

// Served reports whether the route serves or redirects: its domain is
// verified, and so may have a certificate.
func (r Route) Served() bool { return r.Slug != "" || r.Apex != "" }

// Table is the in-memory table of custom domains' routes, safe for
// concurrent use.
type Table struct {
	app core.App
	// gen counts invalidations; a load started before one is not kept.
	gen atomic.Uint64
	cur atomic.Pointer[map[string]Route]
	mu  sync.Mutex // one load at a time
}

// NewTable is the route table of app's domains, loaded on first use.
func NewTable(app core.App) *Table { return &Table{app: app} }

// MovesRoutes reports whether an update of a deployment record (rec as
// saved) can move a route: whether it changed the deployment's slug, the
// one field of a deployment the table reads. A deployment's creation
// moves none (no domain can name it yet), so a deploy or a redeploy
// leaves the table loaded; its deletion does (the caller drops the table).
func MovesRoutes(rec *core.Record) bool {
	d := sites.DeploymentOf(rec)
	return d.Slug() != d.Original().Slug()
}

// Invalidate drops the table; the next lookup loads it again.
func (t *Table) Invalidate() {
	t.gen.Add(1)
	t.cur.Store(nil)
}

// Lookup returns the route of host (normalised, without a port), and
// whether host is a claimed domain.
func (t *Table) Lookup(host string) (Route, bool, error) {
	m := t.cur.Load()
	if m == nil {
		var err error
		if m, err = t.load(); err != nil {
			return Route{}, false, err
		}
	}
	r, ok := (*m)[host]
	return r, ok, nil
}

// AllowCertificate tells whether name is a verified custom domain
// (www.<apex> redirecting included), which may have a certificate: nil
// when it is.
func (t *Table) AllowCertificate(name string) error {
	route, ok, err := t.Lookup(name)
	if err != nil {
		return err
	}
	if !ok || !route.Served() {
		return fmt.Errorf("no certificate for %q: not a verified custom domain", name)
	}
	return nil
}

// Released returns the domains a saved or deleted record of the domains
// collection stood for (NamesOf) that may no longer have a certificate:
// read once the change is committed and the table dropped, so that a
// domain still verified (on another deployment) is kept.
func (t *Table) Released(rec *core.Record) []string {
	var out []string
	for _, name := range NamesOf(rec) {
		if name != "" && t.AllowCertificate(name) != nil {
			out = append(out, name)
		}
	}
	return out
}

func (t *Table) load() (*map[string]Route, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if m := t.cur.Load(); m != nil {
		return m, nil
	}
	gen := t.gen.Load()
	rows, err := routeRows(t.app)
	if err != nil {
		return nil, err
	}
	m := make(map[string]Route, len(rows))
	verifiedOn := map[string]string{} // domain -> deployment
	for _, r := range rows {
		if r.Status == StatusVerified {
			verifiedOn[r.Domain] = r.Deployment
			m[r.Domain] = Route{Slug: r.Slug}
		} else if _, ok := m[r.Domain]; !ok {
			m[r.Domain] = Route{}
		}
	}
	for d, dep := range verifiedOn {
		if apex, ok := WWWApex(d); ok && verifiedOn[apex] == dep {
			m[d] = Route{Slug: m[d].Slug, Apex: apex}
		}
	}
	if t.gen.Load() == gen {
		t.cur.Store(&m)
	}
	return &m, nil
}
