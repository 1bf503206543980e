package hooks

import (
	"net"
	"net/http"
	"strings"
)

// healthPath is PocketBase's health endpoint; under TLS the plain HTTP
// listener answers it too, for load balancers and container health checks
// that probe over plain HTTP.
const healthPath = "/api/health"

// httpRedirectHandler is the plain HTTP listener's handler when serving
// TLS: ACME HTTP-01 challenges (challenges wraps the rest), GET
// /api/health of the web host (or of an IP address, as probes send) from
// app, and for the web host and hosts of valid slugs a 308 to the same host
// and path over https (308 keeps the method and body). Other hosts get a
// 404: the listener is no open redirector.
func (sd *sitedrop) httpRedirectHandler(app http.Handler, challenges func(http.Handler) http.Handler) http.Handler {
	redirect := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == healthPath && (r.Method == http.MethodGet || r.Method == http.MethodHead) &&
			(sd.hosts.IsWebHost(r.Host) || isAddressHost(r.Host)) {
			app.ServeHTTP(w, r)
			return
		}
		host, known := sd.redirectHost(r.Host)
		if !known {
			http.Error(w, "Unknown host", http.StatusNotFound)
			return
		}
		target := "https://" + hostPort(host, "https", sd.httpsPort()) + r.URL.RequestURI()
		w.Header().Set("Location", target)
		w.WriteHeader(http.StatusPermanentRedirect)
	})
	return challenges(redirect)
}

// isAddressHost reports whether a Host header is an IP address (with or
// without a port), as probes and load balancers send.
func isAddressHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return net.ParseIP(strings.Trim(host, "[]")) != nil
}

// redirectHost is the host a plain HTTP request is sent to over https:
// the web host (also for www.<web host>) or <slug>.<sites-domain>, rebuilt
// from its parts; ok is false for hosts sitedrop does not serve, nested
// labels and invalid slugs included.
func (sd *sitedrop) redirectHost(host string) (string, bool) {
	web, sitesDomain := sd.hosts.Domains()
	if sd.hosts.IsWebHost(host) || sd.hosts.IsWWWWebHost(host) {
		return web, true
	}
	if slug, isSite := sd.hosts.Site(host); isSite && slug != "" {
		return slug + "." + sitesDomain, true
	}
	return "", false
}

// httpsPort is the port of https URLs: the public URL's when one is set,
// else the HTTPS listener's ("" for 443).
func (sd *sitedrop) httpsPort() string {
	if port, ok := publicHTTPSPort(sd.cfg.PublicURL); ok {
		return port
	}
	return sd.cfg.listenPort
}
