package server

import (
	"log/slog"
	"net"
	"net/http"
	"strings"

	"sitedrop/sites"
	"sitedrop/sites/domains"
)

// DomainRoutes answers the requests of custom domains (Front's
// CustomDomain is its Serve) from their route table: a verified custom
// domain serves its deployment as the slug host does; www.<apex> answers
// 301 to the apex; a domain claimed but not verified answers 404. None of
// them ever reaches the web host's routes.
type DomainRoutes struct {
	// Hosts names the web host, which is never a custom domain.
	Hosts sites.HostSplit
	// Table routes the custom domains' hosts.
	Table *domains.Table
	// Sites serves a custom domain's site.
	Sites SiteServer
	// OverTLS reports whether a site request came over TLS, behind a TLS
	// proxy too (sites.Links.OverTLS): the www redirect keeps to https.
	OverTLS func(*http.Request) bool
	// Logger receives the table's failures and the site handler's panics.
	Logger *slog.Logger
}

// Serve serves r when its host is a custom domain, and reports whether
// it did. The web host and site hosts never get here.
func (d *DomainRoutes) Serve(w http.ResponseWriter, r *http.Request) bool {
	if r.Host == "" || d.Hosts.IsWebHost(r.Host) || d.Hosts.IsWWWWebHost(r.Host) {
		return false
	}
	host, port := SplitHostPort(r.Host)
	route, ok, err := d.Table.Lookup(host)
	if err != nil {
		d.Logger.Error("custom domain lookup", "host", host, "error", err)
		http.Error(w, "Internal error", http.StatusInternalServerError)
		return true
	}
	if !ok {
		return false
	}
	switch {
	case route.Apex != "":
		scheme := "http"
		if d.OverTLS(r) { // behind a TLS proxy too: never down to http
			scheme = "https"
		}
		http.Redirect(w, r, scheme+"://"+sites.HostPort(route.Apex, scheme, port)+r.URL.RequestURI(), http.StatusMovedPermanently)
	case route.Slug != "":
		ServeSite(d.Sites, d.Logger, w, r, route.Slug)
	default:
		http.Error(w, "This domain is not verified yet.", http.StatusNotFound)
	}
	return true
}

// SplitHostPort splits a Host header into its lower-case name and port
// ("" without one); a host that does not split is all name.
func SplitHostPort(hostport string) (host, port string) {
	host = hostport
	if h, p, err := net.SplitHostPort(hostport); err == nil {
		host, port = h, p
	}
	return strings.ToLower(strings.TrimSuffix(host, ".")), port
}
