package certs

import (
	"net"
	"net/http"

	"sitedrop/sites"
	"sitedrop/sites/serve"
	"sitedrop/sites/wire"
)

// RedirectHandler is the plain HTTP listener's handler when serving TLS:
// ACME HTTP-01 challenges (challenges wraps the rest), GET and HEAD
// /api/health from health on any host but a site host (load balancers and
// probes send the name or address they know), and for the web host, hosts
// of valid slugs and the custom domains that customDomain accepts (nil:
// none; it is given the Host header and returns the name to send to) a
// 308 to the same host and path over https (308 keeps the method and
// body), on httpsPort ("" or "443" for the default port). A malformed
// Host gets a 400, as on the main listener; other hosts get 421 unknown
// host (serve.RefuseUnknownHost): the listener is no open redirector.
func RedirectHandler(hosts sites.HostSplit, httpsPort string, health http.Handler, challenges func(http.Handler) http.Handler,
	customDomain func(hostport string) (host string, ok bool)) http.Handler {
	redirect := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Host != "" && !sites.ValidHost(r.Host) { // none: an HTTP/1.0 health check
			serve.RefuseHost(w)
			return
		}
		host, known := redirectHost(hosts, r.Host)
		custom := false
		if !known && r.Host != "" && customDomain != nil {
			host, custom = customDomain(r.Host)
			known = custom
		}
		if r.URL.Path == wire.HealthPath && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			// a site's own paths are its own, over https
			if _, isSite := hosts.Site(r.Host); !isSite && !custom {
				health.ServeHTTP(w, r)
				return
			}
		}
		if !known {
			serve.RefuseUnknownHost(w)
			return
		}
		if httpsPort != "" && httpsPort != "443" {
			host = net.JoinHostPort(host, httpsPort)
		}
		w.Header().Set("Location", "https://"+host+r.URL.RequestURI())
		w.WriteHeader(http.StatusPermanentRedirect)
	})
	return challenges(redirect)
}

// redirectHost is the host a plain HTTP request is sent to over https:
// the web host (also for www.<web host>) or <slug>.<sites-domain> (or a
// preview host of it, <label>--<slug>.<sites-domain>), rebuilt from its
// parts; ok is false for hosts sitedrop does not serve, nested
// labels and invalid slugs included.
func redirectHost(hosts sites.HostSplit, host string) (string, bool) {
	web, sitesDomain := hosts.Domains()
	if hosts.IsWebHost(host) || hosts.IsWWWWebHost(host) {
		return web, true
	}
	if label, isSite := hosts.SiteLabel(host); isSite && label != "" {
		return label + "." + sitesDomain, true
	}
	return "", false
}
