package hooks

import (
	"net/http"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/hook"

	"sitedrop/hooks/server"
	"sitedrop/hooks/server/metrics"
	"sitedrop/sites"
	"sitedrop/sites/domains"
	"sitedrop/sites/serve"
)

// siteHostPriority is the front door's router priority (see
// server.FrontPriority): before every PocketBase middleware.
const siteHostPriority = server.FrontPriority

// siteHosts serves what is not the web host: the site hosts and the
// custom domains, over HTTP and, with --https, TLS. It is built once the
// services are (register) and read when the app serves.
type siteHosts struct {
	app    core.App
	cfg    *Config
	hosts  sites.HostSplit
	server *serve.Server
	// domains routes custom domains' hosts.
	domains *domains.Table
	// metrics counts the listeners' answers when --metrics is set, and
	// the certificates' events.
	metrics *metrics.Metrics
}

// front builds the front door (see server.Front): call it in OnServe,
// once the listen address is learned (learnListenPort), so its web host
// names are complete.
func (h *siteHosts) front() *server.Front {
	return &server.Front{
		Hosts:        h.hosts,
		Sites:        h.server,
		CustomDomain: h.domainRoutes().Serve,
		ListenHost:   h.cfg.listenHost,
		PublicHost:   server.PublicHostOf(h.cfg.PublicURL),
		Logger:       h.app.Logger(),
		Metrics:      h.requestMetrics(),
	}
}

// domainRoutes answers the custom domains (the front door's
// CustomDomain).
func (h *siteHosts) domainRoutes() *server.DomainRoutes {
	return &server.DomainRoutes{Hosts: h.hosts, Table: h.domains, Sites: h.server, OverTLS: h.cfg.siteOverTLS, Logger: h.app.Logger()}
}

// requestMetrics is the front door's Metrics: with --metrics only, since
// measuring each request costs a little (see metrics.Measure), while the
// other counters are atomic adds, counted always and served only then.
func (h *siteHosts) requestMetrics() *metrics.Metrics {
	if h.cfg.Serve.MetricsAddr == "" {
		return nil
	}
	return h.metrics
}

// bindWWWRedirect sends www.<web host> (on any port) to the web URL with
// 308, path and query kept. PocketBase's own www redirect only matches the
// bare host, so it misses every server on a port other than 80 or 443.
func bindWWWRedirect(se *core.ServeEvent, hosts sites.HostSplit, links sites.Links) {
	se.Router.Bind(&hook.Handler[*core.RequestEvent]{
		Id:       "sitedropWWWRedirect",
		Priority: siteHostPriority,
		Func: func(e *core.RequestEvent) error {
			if !hosts.IsWWWWebHost(e.Request.Host) {
				return e.Next()
			}
			return e.Redirect(http.StatusPermanentRedirect, links.Web()+e.Request.URL.RequestURI())
		},
	})
}

// serveSite answers a site-host request (see server.ServeSite).
func (h *siteHosts) serveSite(w http.ResponseWriter, r *http.Request, slug string) {
	server.ServeSite(h.server, h.app.Logger(), w, r, slug)
}
