package hooks

import (
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/pocketbase/pocketbase/core"

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
// once the change is committed.
func bindDomainTable(sd *sitedrop) {
	drop := func(e *core.RecordEvent) error {
		sd.domainHosts.Invalidate()
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
	for _, name := range domains.NamesOf(e.Record) {
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
	route, ok, err := sd.domainHosts.Lookup(host)
	if err != nil {
		sd.app.Logger().Error("custom domain lookup", "host", host, "error", err)
		http.Error(w, "Internal error", http.StatusInternalServerError)
		return true
	}
	if !ok {
		return false
	}
	switch {
	case route.Apex != "":
		scheme := "http"
		if sd.cfg.siteOverTLS(r) { // behind a TLS proxy too: never down to http
			scheme = "https"
		}
		http.Redirect(w, r, scheme+"://"+sites.HostPort(route.Apex, scheme, port)+r.URL.RequestURI(), http.StatusMovedPermanently)
	case route.Slug != "":
		sd.serveSite(w, r, route.Slug)
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
	return sd.domainHosts.AllowCertificate(name)
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
