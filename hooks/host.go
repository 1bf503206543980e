package hooks

import (
	"net/http"
	"net/netip"
	"net/url"
	"strings"

	"github.com/pocketbase/pocketbase/apis"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/hook"

	"sitedrop/hooks/certs"
	"sitedrop/sites"
	"sitedrop/sites/serve"
)

// siteHostPriority runs the site-host split before every PocketBase
// middleware (the www redirect included), so site traffic never meets the
// API, the admin UI, CORS, auth cookies or the activity log.
const siteHostPriority = apis.DefaultWWWRedirectMiddlewarePriority - 1

// bindSiteHost serves <slug>.<sites-domain> requests, and those of custom
// domains (see customHost), from the site server and never lets them
// reach PocketBase's routes; a malformed Host (see
// sites.ValidHost) is refused with 400 before either. It does so twice over:
//
//   - In production it wraps the HTTP server's handler (wrapServerHandler),
//     so site requests skip PocketBase's router entirely (no request
//     event, no body copy). Every listener serves that handler, so it is
//     also where a host the server does not serve is refused (see
//     webHostServes).
//   - A router middleware before all others does the same for handlers
//     that serve the router directly, such as the test harness, but lets
//     other hosts through: test requests carry httptest's example.com.
func bindSiteHost(sd *sitedrop, se *core.ServeEvent) {
	se.Router.Bind(&hook.Handler[*core.RequestEvent]{
		Id:       "sitedropSiteHost",
		Priority: siteHostPriority,
		Func: func(e *core.RequestEvent) error {
			slug, isSite := sd.siteSlug(e.Request.Host)
			if isSite {
				sd.serveSite(e.Response, e.Request, slug)
				return nil
			}
			if !validRequestHost(e.Request.Host) {
				serve.RefuseHost(e.Response)
				return nil
			}
			if sd.customHost(e.Response, e.Request) {
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

// wrapServerHandler puts the site split in front of the server's handler
// once PocketBase has built it (after the OnServe chain).
func wrapServerHandler(sd *sitedrop, se *core.ServeEvent) {
	if se.Server == nil || se.Server.Handler == nil {
		return
	}
	next := se.Server.Handler
	se.Server.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if slug, isSite := sd.siteSlug(r.Host); isSite {
			sd.serveSite(w, r, slug)
			return
		}
		if !validRequestHost(r.Host) {
			serve.RefuseHost(w)
			return
		}
		if sd.customHost(w, r) {
			return
		}
		if !sd.webHostServes(r) {
			serve.RefuseUnknownHost(w)
			return
		}
		next.ServeHTTP(w, r)
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
