package hooks

import (
	"net/http"
)

// healthPath is PocketBase's health endpoint; under TLS the plain HTTP
// listener answers it too, for load balancers and container health checks
// that probe over plain HTTP.
const healthPath = "/api/health"

// httpRedirectHandler is the plain HTTP listener's handler when serving
// TLS: ACME HTTP-01 challenges (challenges wraps the rest), GET and HEAD
// /api/health from app on any host but a site host (load balancers and
// probes send the name or address they know), and for the web host and
// hosts of valid slugs a 308 to the same host and path over https (308
// keeps the method and body). A malformed Host gets a 400, as on the main
// listener; other hosts get a 404: the listener is no open redirector.
func (sd *sitedrop) httpRedirectHandler(app http.Handler, challenges func(http.Handler) http.Handler) http.Handler {
	redirect := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !validRequestHost(r.Host) {
			refuseHost(w)
			return
		}
		if r.URL.Path == healthPath && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			// a site's own paths are its own, over https
			if _, isSite := sd.hosts.Site(r.Host); !isSite {
				app.ServeHTTP(w, r)
				return
			}
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
