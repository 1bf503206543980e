package hooks

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
	"sitedrop/sites/domains"
)

// Custom domains on the request path: a host that is a verified custom
// domain serves its deployment as the slug host does; www.<apex> answers
// 301 to the apex when both are verified on the same deployment; a
// domain that is claimed but not verified answers 404. None of them ever
// reaches the web host's routes. The table of domains is held in memory
// and loaded again after any change to a domain or a deployment.

// domainRoute is what a custom domain's requests get.
type domainRoute struct {
	// slug is the site served, "" when the domain is not verified.
	slug string
	// apex, for www.<apex>, is where it redirects.
	apex string
}

// domainTable is the in-memory table of custom domains.
type domainTable struct {
	app core.App
	// gen counts invalidations; a load started before one is not kept.
	gen atomic.Uint64
	cur atomic.Pointer[map[string]domainRoute]
	mu  sync.Mutex // one load at a time
}

func newDomainTable(app core.App) *domainTable { return &domainTable{app: app} }

// invalidate drops the table; the next lookup loads it again.
func (t *domainTable) invalidate() {
	t.gen.Add(1)
	t.cur.Store(nil)
}

// lookup returns the route of host (normalised, without a port).
func (t *domainTable) lookup(host string) (domainRoute, bool, error) {
	m := t.cur.Load()
	if m == nil {
		var err error
		if m, err = t.load(); err != nil {
			return domainRoute{}, false, err
		}
	}
	r, ok := (*m)[host]
	return r, ok, nil
}

func (t *domainTable) load() (*map[string]domainRoute, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if m := t.cur.Load(); m != nil {
		return m, nil
	}
	gen := t.gen.Load()
	var rows []struct {
		Domain     string `db:"domain"`
		Deployment string `db:"deployment"`
		Status     string `db:"status"`
		Slug       string `db:"slug"`
	}
	err := t.app.DB().Select("d.domain", "d.deployment", "d.status", "p.slug").
		From(domains.Collection+" d").
		InnerJoin(sites.DeploymentsCollection+" p", dbx.NewExp("p.id = d.deployment")).
		All(&rows)
	if err != nil {
		return nil, fmt.Errorf("load custom domains: %w", err)
	}
	m := make(map[string]domainRoute, len(rows))
	verifiedOn := map[string]string{} // domain -> deployment
	for _, r := range rows {
		if r.Status == domains.StatusVerified {
			verifiedOn[r.Domain] = r.Deployment
			m[r.Domain] = domainRoute{slug: r.Slug}
		} else if _, ok := m[r.Domain]; !ok {
			m[r.Domain] = domainRoute{}
		}
	}
	for d, dep := range verifiedOn {
		if apex, ok := domains.WWWApex(d); ok && verifiedOn[apex] == dep {
			m[d] = domainRoute{slug: m[d].slug, apex: apex}
		}
	}
	if t.gen.Load() == gen {
		t.cur.Store(&m)
	}
	return &m, nil
}

// bindDomainTable keeps the table in step with the database: any saved or
// deleted domain or deployment (a slug edited, a site deleted) drops it,
// once the change is committed.
func bindDomainTable(sd *sitedrop) {
	drop := func(e *core.RecordEvent) error {
		sd.domainHosts.invalidate()
		return e.Next()
	}
	for _, col := range []string{domains.Collection, sites.DeploymentsCollection} {
		sd.app.OnRecordAfterCreateSuccess(col).BindFunc(drop)
		sd.app.OnRecordAfterUpdateSuccess(col).BindFunc(drop)
		sd.app.OnRecordAfterDeleteSuccess(col).BindFunc(drop)
	}
	// A released domain's certificate goes at once, not at the restart.
	sd.app.OnRecordAfterUpdateSuccess(domains.Collection).BindFunc(sd.forgetReleasedCertificate)
	sd.app.OnRecordAfterDeleteSuccess(domains.Collection).BindFunc(sd.forgetReleasedCertificate)
	// Replicas serve a site at its verified domains too (see verifiedHosts).
	sd.app.OnRecordAfterCreateSuccess(domains.Collection).BindFunc(sd.republishDomainSite)
	sd.app.OnRecordAfterUpdateSuccess(domains.Collection).BindFunc(sd.republishDomainSite)
	sd.app.OnRecordAfterDeleteSuccess(domains.Collection).BindFunc(sd.republishDomainSite)
}

// forgetReleasedCertificate drops from the certificate cache the
// certificate of a domain the server no longer serves: the record's domain
// (before and after an update), once the change is committed and the
// domain table dropped (bound after the table's hook), unless it is still
// verified (on another deployment). A deleted deployment's domains are
// deleted with it, each through this hook.
func (sd *sitedrop) forgetReleasedCertificate(e *core.RecordEvent) error {
	m := sd.tlsCerts.Load()
	if m == nil {
		return e.Next()
	}
	names := []string{e.Record.GetString("domain")}
	if orig := e.Record.Original(); orig != nil && orig.GetString("domain") != names[0] {
		names = append(names, orig.GetString("domain"))
	}
	for _, name := range names {
		if name != "" && sd.allowDomainCertificate(name) != nil {
			m.Forget(name)
		}
	}
	return e.Next()
}

// customHost serves r when its host is a custom domain, and reports
// whether it did. The web host and site hosts never get here.
func (sd *sitedrop) customHost(w http.ResponseWriter, r *http.Request) bool {
	if sd.domainHosts == nil || r.Host == "" || sd.hosts.IsWebHost(r.Host) || sd.hosts.IsWWWWebHost(r.Host) {
		return false
	}
	host, port := splitHostPortLoose(r.Host)
	route, ok, err := sd.domainHosts.lookup(host)
	if err != nil {
		sd.app.Logger().Error("custom domain lookup", "host", host, "error", err)
		http.Error(w, "Internal error", http.StatusInternalServerError)
		return true
	}
	if !ok {
		return false
	}
	switch {
	case route.apex != "":
		scheme := "http"
		if sd.cfg.siteOverTLS(r) { // behind a TLS proxy too: never down to http
			scheme = "https"
		}
		http.Redirect(w, r, scheme+"://"+hostPort(route.apex, scheme, port)+r.URL.RequestURI(), http.StatusMovedPermanently)
	case route.slug != "":
		sd.serveSite(w, r, route.slug)
	default:
		http.Error(w, "This domain is not verified yet.", http.StatusNotFound)
	}
	return true
}

// allowDomainCertificate tells whether name is a verified custom domain
// (www.<apex> redirecting included), which may have a certificate.
func (sd *sitedrop) allowDomainCertificate(name string) error {
	if sd.domainHosts == nil {
		return fmt.Errorf("no certificate for %q: not a sitedrop host", name)
	}
	route, ok, err := sd.domainHosts.lookup(name)
	if err != nil {
		return err
	}
	if !ok || (route.slug == "" && route.apex == "") {
		return fmt.Errorf("no certificate for %q: not a verified custom domain", name)
	}
	return nil
}

// splitHostPortLoose splits a Host header into its lower-case name and
// port ("" without one).
func splitHostPortLoose(hostport string) (host, port string) {
	host = hostport
	if h, p, err := net.SplitHostPort(hostport); err == nil {
		host, port = h, p
	}
	return strings.ToLower(strings.TrimSuffix(host, ".")), port
}
