package replica

import (
	"io"
	"net/http"

	"sitedrop/sites"
	"sitedrop/sites/serve"
	"sitedrop/sites/wire"
)

// HealthPath answers a load balancer's health check on any host that is
// not a published site: 200 once the replica has listed the sites, 503
// before.
const HealthPath = wire.HealthPath

// ServeHTTP serves the published site of the request's host (its name
// without port, lower case); any other host gets the site server's 404
// page. Nothing else is served: no API, no dashboard.
func (r *Replica) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if !sites.ValidHost(req.Host) {
		serve.RefuseHost(w)
		return
	}
	host := sites.NormHost(req.Host)
	if req.URL.Path == HealthPath && !r.published(host) {
		r.health(w)
		return
	}
	defer serve.Cork(req).Uncork(w)
	r.server.ServeSite(w, req, host)
}

// Publishes reports whether host (a valid Host header, see
// sites.ValidHost) has a published document.
func (r *Replica) Publishes(host string) bool {
	return r.published(sites.NormHost(host))
}

// published reports whether host has a published document.
func (r *Replica) published(host string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.index[host]
	return ok
}

func (r *Replica) health(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if !r.Ready() {
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, `{"status":"starting"}`+"\n")
		return
	}
	io.WriteString(w, `{"status":"ok"}`+"\n")
}
