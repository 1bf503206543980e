package server

import (
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/pocketbase/pocketbase/apis"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/hook"
	"github.com/pocketbase/pocketbase/tools/router"

	"sitedrop/hooks/server/metrics"
	"sitedrop/sites"
	"sitedrop/sites/serve"
	"sitedrop/sites/wire"
)

// FrontPriority runs the front door before every PocketBase middleware
// (the www redirect included), so site traffic never meets the API, the
// admin UI, CORS, auth cookies or the activity log.
const FrontPriority = apis.DefaultWWWRedirectMiddlewarePriority - 1

// FrontMiddlewareID is the router middleware's id (see Front.Bind).
const FrontMiddlewareID = "sitedropSiteHost"

// SiteServer serves a site's request by its slug: sites/serve's Server.
type SiteServer interface {
	ServeSite(w http.ResponseWriter, r *http.Request, slug string)
}

// Front is the front door: it decides which part of the server answers
// a request, by its Host. Build it once, complete, when the server's
// listen address is known, and hand it to both the listeners (Wrap) and
// the router (Bind): the two then can never disagree.
//
//	front := &server.Front{Hosts: hosts, Sites: siteServer, Logger: app.Logger(),
//		CustomDomain: domains.Serve, ListenHost: "127.0.0.1", PublicHost: "example.com"}
//	front.Bind(se.Router)
//	se.Server.Handler = front.Wrap(se.Server.Handler)
type Front struct {
	// Hosts tells site hosts from the web host.
	Hosts sites.HostSplit
	// Sites serves the site hosts.
	Sites SiteServer
	// CustomDomain answers a request whose host is a custom domain (its
	// site, its redirect or its "not verified" answer) and reports
	// whether it did; nil: there are none.
	CustomDomain func(w http.ResponseWriter, r *http.Request) (handled bool)
	// ListenHost is the host of the listen address, normalised ("" for
	// all interfaces); PublicHost the host of --public-url ("" without
	// one, see PublicHostOf). Both name the web host too.
	ListenHost, PublicHost string
	// Logger receives the site handler's panics.
	Logger *slog.Logger
	// Metrics, when set, counts every answer of the listeners' handler
	// (Wrap) by the class of its host (see Route); nil: not counted.
	Metrics *metrics.Metrics
}

// Handle is the one place that decides which part of the server answers
// a request, by its Host:
//
//   - <slug>.<sites-domain> and its preview hosts
//     (<label>--<slug>.<sites-domain>, see sites.HostSplit.SiteLabel):
//     the site server, by that label, never PocketBase's routes;
//   - a malformed Host (see sites.ValidHost): 400, before anything else;
//   - a custom domain (see CustomDomain): its site, or its "not
//     verified" answer;
//   - a host the server does not serve (see WebHostServes): 421 "unknown
//     host", when refuseUnknown;
//   - anything else: the web host, PocketBase's router (handled is false,
//     and the caller passes the request on).
//
// The listeners' handler (Wrap) and the router middleware (Bind) both
// call it.
func (f *Front) Handle(w http.ResponseWriter, r *http.Request, refuseUnknown bool) (handled bool) {
	return f.Route(w, r, refuseUnknown) != metrics.Web
}

// Route is Handle, and tells which part answered: metrics.Web when none
// did (the caller passes the request on to the router), metrics.Unknown
// for a refused host.
func (f *Front) Route(w http.ResponseWriter, r *http.Request, refuseUnknown bool) metrics.HostClass {
	if label, isSite := f.Hosts.SiteLabel(r.Host); isSite {
		ServeSite(f.Sites, f.Logger, w, r, label)
		return metrics.Site
	}
	if !ValidRequestHost(r.Host) {
		serve.RefuseHost(w)
		return metrics.Unknown
	}
	if f.CustomDomain != nil && f.CustomDomain(w, r) {
		return metrics.CustomDomain
	}
	if refuseUnknown && !f.WebHostServes(r) {
		serve.RefuseUnknownHost(w)
		return metrics.Unknown
	}
	return metrics.Web
}

// Bind puts the front door before every PocketBase middleware, for
// handlers that serve the router directly, such as the test harness. In
// production the listeners' handler (Wrap) has already answered every
// request that is not the web host's, so site requests skip PocketBase's
// router entirely (no request event, no body copy). The middleware lets
// unknown hosts through: test requests carry httptest's example.com.
func (f *Front) Bind(r *router.Router[*core.RequestEvent]) {
	r.Bind(&hook.Handler[*core.RequestEvent]{
		Id:       FrontMiddlewareID,
		Priority: FrontPriority,
		Func: func(e *core.RequestEvent) error {
			if f.Handle(e.Response, e.Request, false) {
				return nil
			}
			return e.Next()
		},
	})
}

// Wrap puts the front door in front of next, the server's handler once
// PocketBase has built it (after the OnServe chain): every listener
// serves that handler, so it is where a host the server does not serve is
// refused, and where every answer is counted (Metrics).
func (f *Front) Wrap(next http.Handler) http.Handler {
	route := func(w http.ResponseWriter, r *http.Request) metrics.HostClass {
		serve.RestoreTLS(r) // a request on a TLS connection handed over by a ConnServer
		class := f.Route(w, r, true)
		if class == metrics.Web {
			next.ServeHTTP(w, r)
		}
		return class
	}
	if m := f.Metrics; m != nil {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			m.Measure(w, r, route)
		})
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		route(w, r)
	})
}

// HTTP1 is sitedrop's own HTTP/1.1 server for the site hosts (see
// serve.HTTP1), the main listener's ListenFront.HTTP1: it routes by the
// same SiteLabel as Route, answers on the general path with the same
// handler as Wrap for a site host (ServeSite: panics recovered; Metrics'
// Measure), gives the fast answers with Sites when it is a *serve.Server
// (counted in Metrics as Measure counts), with the server's header and
// idle timeouts (header, idle: the http.Server's ReadHeaderTimeout and
// IdleTimeout, see SetTimeouts; 0: HeaderTimeout, IdleTimeout) and
// PocketBase's write timeout. Any other host goes to net/http, and so to
// Wrap. The listener runs it on every plain connection, and on every TLS
// one whose client did not choose h2:
//
//	ln.Serve(serve.ListenFront{..., HTTP1: f.HTTP1(se.Server.ReadHeaderTimeout, se.Server.IdleTimeout)})
func (f *Front) HTTP1(header, idle time.Duration) *serve.HTTP1 {
	if header <= 0 {
		header = HeaderTimeout
	}
	if idle <= 0 {
		idle = IdleTimeout
	}
	o := serve.HTTP1Options{
		SiteLabel:     f.Hosts.SiteLabel,
		HeaderTimeout: header,
		IdleTimeout:   idle,
		WriteTimeout:  WriteTimeout,
		Logger:        f.Logger,
	}
	if s, ok := f.Sites.(*serve.Server); ok {
		o.Sites = s
	}
	if m := f.Metrics; m != nil {
		o.Serve = func(w http.ResponseWriter, r *http.Request, label string) {
			m.Measure(w, r, func(w http.ResponseWriter, r *http.Request) metrics.HostClass {
				ServeSite(f.Sites, f.Logger, w, r, label)
				return metrics.Site
			})
		}
		o.Count = func(status int, bytes int64, d time.Duration) {
			m.Observe(metrics.Site, status, bytes, d)
		}
	} else {
		o.Serve = func(w http.ResponseWriter, r *http.Request, label string) {
			ServeSite(f.Sites, f.Logger, w, r, label)
		}
	}
	return serve.NewHTTP1(o)
}

// WebHostServes reports whether the web host (PocketBase's router: the
// API, pages, sign-in, dashboard) may answer r, whose Host is well formed
// and neither a site host nor a custom domain: when it names the web host
// (IsWebHost) or www.<web host> (redirected to it), when it has no Host
// (an HTTP/1.0 probe), and for GET and HEAD /api/health on any host,
// since load balancers and probes send whatever name or address they
// know.
func (f *Front) WebHostServes(r *http.Request) bool {
	if r.Host == "" || f.IsWebHost(r.Host) || f.Hosts.IsWWWWebHost(r.Host) {
		return true
	}
	return r.URL.Path == wire.HealthPath && (r.Method == http.MethodGet || r.Method == http.MethodHead)
}

// IsWebHost reports whether host, a well-formed Host header, names the
// web host: --domain, the host of --public-url, and also localhost, the
// listen address's host and any IP address. A request by address or by a
// local name is one for this machine itself (so `serve` on
// http://127.0.0.1:8090 keeps working with the default --domain
// localhost); any other name is one someone pointed here (a released
// custom domain, a DNS rebinding) that the web host does not answer for.
func (f *Front) IsWebHost(host string) bool {
	if f.Hosts.IsWebHost(host) {
		return true
	}
	h := sites.NormHost(host)
	if h == "" {
		return false
	}
	if h == "localhost" || h == f.ListenHost || h == f.PublicHost {
		return true
	}
	_, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]"))
	return err == nil
}

// PublicHostOf is the normalised host of a --public-url ("" without one,
// or when it does not parse).
func PublicHostOf(publicURL string) string {
	publicURL = strings.TrimSpace(publicURL)
	if publicURL == "" {
		return ""
	}
	u, err := url.Parse(publicURL)
	if err != nil {
		return ""
	}
	return sites.NormHost(u.Host)
}

// PublicHTTPSPort is the port of an https --public-url ("" for the
// default port); ok is false when the public URL is unset or not https.
func PublicHTTPSPort(publicURL string) (port string, ok bool) {
	if publicURL == "" {
		return "", false
	}
	u, err := url.Parse(publicURL)
	if err != nil || u.Scheme != "https" {
		return "", false
	}
	if p := u.Port(); p != "443" {
		return p, true
	}
	return "", true
}

// ValidRequestHost reports whether a request's Host is well formed (see
// sites.ValidHost), or absent: an HTTP/1.0 health check may send none.
func ValidRequestHost(host string) bool {
	return host == "" || sites.ValidHost(host)
}

// ServeSite answers a site-host request with s. It runs outside
// PocketBase's panic recovery, so it turns a panic into a 500 logged to
// log itself (if the response had already started, the client sees a cut
// answer). The response is corked (see serve.Cork): it leaves in as few
// writes as possible; over HTTP/2 its connection batches its writes from
// then on, so a response's HEADERS and DATA leave together.
func ServeSite(s SiteServer, log *slog.Logger, w http.ResponseWriter, r *http.Request, slug string) {
	defer serve.Cork(r).Uncork(w) // registered first: runs after the recovery
	defer func() {
		if rec := recover(); rec != nil {
			log.Error("site handler panic", "host", r.Host, "path", r.URL.Path, "panic", rec)
			http.Error(w, "Internal error", http.StatusInternalServerError)
		}
	}()
	s.ServeSite(w, r, slug)
}
