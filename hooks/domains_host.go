package hooks

import (
	"net"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/hooks/server/certs"
	"sitedrop/sites"
	"sitedrop/sites/domains"
)

// Custom domains on the request path (the route table is
// domains.Table): a host that is a verified custom domain serves its
// deployment as the slug host does; www.<apex> answers 301 to the apex;
// a domain claimed but not verified answers 404. None of them ever
// reaches the web host's routes.

// bindDomainTable keeps the table in step with the database: any saved or
// deleted domain or deployment (a slug edited, a site deleted) drops it,
// once the change is committed. A released domain's certificate goes from
// certs' cache, a newly verified one's is ordered at once, and replicas
// are told of a site's changed domains.
func bindDomainTable(app core.App, table *domains.Table, tlsCerts *atomic.Pointer[certs.Manager], pub *sitePublisher) {
	drop := func(e *core.RecordEvent) error {
		table.Invalidate()
		return e.Next()
	}
	for _, col := range []string{domains.Collection, sites.DeploymentsCollection} {
		app.OnRecordAfterCreateSuccess(col).BindFunc(drop)
		app.OnRecordAfterUpdateSuccess(col).BindFunc(drop)
		app.OnRecordAfterDeleteSuccess(col).BindFunc(drop)
	}
	// A released domain's certificate goes at once, not at the restart.
	forget := forgetReleasedCertificate(table, tlsCerts)
	app.OnRecordAfterUpdateSuccess(domains.Collection).BindFunc(forget)
	app.OnRecordAfterDeleteSuccess(domains.Collection).BindFunc(forget)
	// A verified domain's certificate is ordered at once, not at its first visit.
	obtain := obtainVerifiedCertificate(tlsCerts)
	app.OnRecordAfterCreateSuccess(domains.Collection).BindFunc(obtain)
	app.OnRecordAfterUpdateSuccess(domains.Collection).BindFunc(obtain)
	// Replicas serve a site at its verified domains too (see newPublisher).
	app.OnRecordAfterCreateSuccess(domains.Collection).BindFunc(pub.republishDomainSite)
	app.OnRecordAfterUpdateSuccess(domains.Collection).BindFunc(pub.republishDomainSite)
	app.OnRecordAfterDeleteSuccess(domains.Collection).BindFunc(pub.republishDomainSite)
}

// forgetReleasedCertificate is the record hook that drops from the
// certificate cache (once --https has built it) the certificate of a
// domain the server no longer serves: the record's domain (before and
// after an update), once the change is committed and the domain table
// dropped (bound after the table's hook), unless it is still verified (on
// another deployment). A deleted deployment's domains are deleted with
// it, each through this hook.
func forgetReleasedCertificate(table *domains.Table, tlsCerts *atomic.Pointer[certs.Manager]) func(*core.RecordEvent) error {
	return func(e *core.RecordEvent) error {
		m := tlsCerts.Load()
		if m == nil {
			return e.Next()
		}
		for _, name := range table.Released(e.Record) {
			m.Forget(name)
		}
		return e.Next()
	}
}

// obtainVerifiedCertificate is the record hook that has the certificate
// manager (once --https has built it) order the certificate of a domain
// that a save made verified, whichever path verified it (the API's or the
// page's check, the job, the dashboard): in the background, within the
// hour's budget of new certificates (see certs.Manager.Obtain), so that
// the domain's first visitor does not wait for the order. It runs once the
// change is committed and the domain table dropped (bound after the
// table's hook), so the manager's decision sees the domain verified.
func obtainVerifiedCertificate(tlsCerts *atomic.Pointer[certs.Manager]) func(*core.RecordEvent) error {
	return func(e *core.RecordEvent) error {
		if m := tlsCerts.Load(); m != nil {
			if name, ok := domains.NewlyVerified(e.Record); ok {
				m.Obtain(name)
			}
		}
		return e.Next()
	}
}

// customHost serves r when its host is a custom domain, and reports
// whether it did. The web host and site hosts never get here.
func (h *siteHosts) customHost(w http.ResponseWriter, r *http.Request) bool {
	if r.Host == "" || h.hosts.IsWebHost(r.Host) || h.hosts.IsWWWWebHost(r.Host) {
		return false
	}
	host, port := splitHostPortLoose(r.Host)
	route, ok, err := h.domains.Lookup(host)
	if err != nil {
		h.app.Logger().Error("custom domain lookup", "host", host, "error", err)
		http.Error(w, "Internal error", http.StatusInternalServerError)
		return true
	}
	if !ok {
		return false
	}
	switch {
	case route.Apex != "":
		scheme := "http"
		if h.cfg.siteOverTLS(r) { // behind a TLS proxy too: never down to http
			scheme = "https"
		}
		http.Redirect(w, r, scheme+"://"+sites.HostPort(route.Apex, scheme, port)+r.URL.RequestURI(), http.StatusMovedPermanently)
	case route.Slug != "":
		h.serveSite(w, r, route.Slug)
	default:
		http.Error(w, "This domain is not verified yet.", http.StatusNotFound)
	}
	return true
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
