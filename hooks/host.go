package hooks

import (
	"net/http"
	"net/netip"
	"net/url"
	"strings"

	"github.com/pocketbase/pocketbase/apis"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/hook"

	"sitedrop/hooks/server/certs"
	"sitedrop/sites"
	"sitedrop/sites/serve"
)

// siteHostPriority runs the site-host split before every PocketBase
// middleware (the www redirect included), so site traffic never meets the
// API, the admin UI, CORS, auth cookies or the activity log.
const siteHostPriority = apis.DefaultWWWRedirectMiddlewarePriority - 1

// frontDoor is the one place that decides which part of the server
// answers a request, by its Host:
//
//   - <slug>.<sites-domain> (and a version host of it): the site server,
//     never PocketBase's routes;
//   - a malformed Host (see sites.ValidHost): 400, before anything else;
//   - a custom domain (see customHost): its site, or its "not verified"
//     answer;
//   - a host the server does not serve (see webHostServes): 421 "unknown
//     host", when refuseUnknown;
//   - anything else: the web host, PocketBase's router (handled is false,
//     and the caller passes the request on).
//
// The listeners' handler (wrapServerHandler) and the router middleware
// (bindSiteHost) both call it, so the two can never disagree.
func (sd *sitedrop) frontDoor(w http.ResponseWriter, r *http.Request, refuseUnknown bool) (handled bool) {
	if slug, isSite := sd.siteSlug(r.Host); isSite {
		sd.serveSite(w, r, slug)
		return true
	}
	if !validRequestHost(r.Host) {
		serve.RefuseHost(w)
		return true
	}
	if sd.customHost(w, r) {
		return true
	}
	if refuseUnknown && !sd.webHostServes(r) {
		serve.RefuseUnknownHost(w)
		return true
	}
	return false
}

// bindSiteHost puts the front door before every PocketBase middleware, for
// handlers that serve the router directly, such as the test harness. In
// production the listeners' handler (wrapServerHandler) has already
// answered every request that is not the web host's, so site requests
// skip PocketBase's router entirely (no request event, no body copy). The
// middleware lets unknown hosts through: test requests carry httptest's
// example.com.
func bindSiteHost(sd *sitedrop, se *core.ServeEvent) {
	se.Router.Bind(&hook.Handler[*core.RequestEvent]{
		Id:       "sitedropSiteHost",
		Priority: siteHostPriority,
		Func: func(e *core.RequestEvent) error {
			if sd.frontDoor(e.Response, e.Request, false) {
				return nil
			}
			return e.Next()
		},
	})
}

// bindWWWRedirect sends www.<web host> (on any port) to the web URL with
// 308, path and query kept. PocketBase's own www redirect only matches the
// bare host, so it misses every server on a port other than 80 or 443.
func bindWWWRedirect(sd *sitedrop, se *core.ServeEvent) {
	se.Router.Bind(&hook.Handler[*core.RequestEvent]{
		Id:       "sitedropWWWRedirect",
		Priority: siteHostPriority,
		Func: func(e *core.RequestEvent) error {
			if !sd.hosts.IsWWWWebHost(e.Request.Host) {
				return e.Next()
			}
			return e.Redirect(http.StatusPermanentRedirect, sd.webURL()+e.Request.URL.RequestURI())
		},
	})
}

// wrapServerHandler puts the front door in front of the server's handler
// once PocketBase has built it (after the OnServe chain): every listener
// serves that handler, so it is where a host the server does not serve is
// refused.
func wrapServerHandler(sd *sitedrop, se *core.ServeEvent) {
	if se.Server == nil || se.Server.Handler == nil {
		return
	}
	next := se.Server.Handler
	se.Server.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !sd.frontDoor(w, r, true) {
			next.ServeHTTP(w, r)
		}
	})
}

// webHostServes reports whether the web host (PocketBase's router: the
// API, pages, sign-in, dashboard) may answer r, whose Host is well formed
// and neither a site host nor a custom domain: when it names the web host
// (isWebHost) or www.<web host> (redirected to it), when it has no Host (an
// HTTP/1.0 probe), and for GET and HEAD /api/health on any host, since
// load balancers and probes send whatever name or address they know.
func (sd *sitedrop) webHostServes(r *http.Request) bool {
	if r.Host == "" || sd.isWebHost(r.Host) || sd.hosts.IsWWWWebHost(r.Host) {
		return true
	}
	return r.URL.Path == certs.HealthPath && (r.Method == http.MethodGet || r.Method == http.MethodHead)
}

// isWebHost reports whether host, a well-formed Host header, names the
// web host: --domain, the host of --public-url, and also localhost, the
// listen address's host and any IP address. A request by address or by a
// local name is one for this machine itself (so `serve` on
// http://127.0.0.1:8090 keeps working with the default --domain
// localhost); any other name is one someone pointed here (a released
// custom domain, a DNS rebinding) that the web host does not answer for.
func (sd *sitedrop) isWebHost(host string) bool {
	if sd.hosts.IsWebHost(host) {
		return true
	}
	h := sites.NormHost(host)
	if h == "" {
		return false
	}
	if h == "localhost" || h == sd.cfg.listenHost || h == sd.publicHost {
		return true
	}
	_, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]"))
	return err == nil
}

// publicHostOf is the normalised host of a --public-url ("" without one,
// or when it does not parse).
func publicHostOf(publicURL string) string {
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

// validRequestHost reports whether a request's Host is well formed (see
// sites.ValidHost), or absent: an HTTP/1.0 health check may send none.
func validRequestHost(host string) bool {
	return host == "" || sites.ValidHost(host)
}

// siteSlug tells whether host is a site host and which slug it names. The
// web host and www.<web host> are never site hosts, nor is a malformed host.
func (sd *sitedrop) siteSlug(host string) (string, bool) {
	return sd.hosts.Site(host)
}

// serveSite answers a site-host request. It runs outside PocketBase's panic
// recovery, so it turns a panic into a logged 500 itself (if the response
// had already started, the client sees a cut answer). The response is
// corked (see serve.Cork): it leaves in as few writes as possible.
func (sd *sitedrop) serveSite(w http.ResponseWriter, r *http.Request, slug string) {
	defer serve.Cork(r).Uncork(w) // registered first: runs after the recovery
	defer func() {
		if rec := recover(); rec != nil {
			sd.app.Logger().Error("site handler panic", "host", r.Host, "path", r.URL.Path, "panic", rec)
			http.Error(w, "Internal error", http.StatusInternalServerError)
		}
	}()
	sd.server.ServeSite(w, r, slug)
}
