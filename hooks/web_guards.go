package hooks

import (
	"net/http"
	"strings"

	"github.com/pocketbase/pocketbase/apis"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/hook"

	"sitedrop/sites/safetext"
)

// corsMethods are the methods a CORS preflight may ask for.
const corsMethods = "GET, HEAD, PUT, PATCH, POST, DELETE"

// bindWebGuards replaces PocketBase's global CORS middleware (which
// answers "Access-Control-Allow-Origin: *" on every route) with sitedrop's
// policy, refuses anonymous deploys from pages of other origins, and keeps
// secrets out of the request log.
func bindWebGuards(sd *sitedrop, se *core.ServeEvent) {
	se.Router.Unbind(apis.DefaultCorsMiddlewareId)
	se.Router.Bind(sd.corsMiddleware())
	se.Router.Bind(anonCrossOriginGuard())
	se.Router.Bind(logRedactMiddleware())
}

// corsMiddleware is the CORS policy of the web host:
//   - PocketBase's API and dashboard (/api/, /_/) keep PocketBase's CORS
//     with the --origins list;
//   - /submit/ sets its own headers (any origin may post a form);
//   - sitedrop's other routes allow any origin only for requests that
//     carry a key (Authorization: Bearer), and preflights only when they
//     ask for the Authorization header. Such requests are never sent by a
//     browser on its own, and no cookie is allowed along (no
//     Access-Control-Allow-Credentials), so another page can only act with
//     a key it already has.
//
// It runs where PocketBase's did: before the activity log and the rate
// limiter, so that preflights are neither logged nor counted.
func (sd *sitedrop) corsMiddleware() *hook.Handler[*core.RequestEvent] {
	pb := apis.CORS(apis.CORSConfig{
		AllowOrigins: sd.cfg.Serve.Origins,
		AllowMethods: strings.Split(strings.ReplaceAll(corsMethods, " ", ""), ","),
	})
	return &hook.Handler[*core.RequestEvent]{
		Id:       "sitedropCORS",
		Priority: apis.DefaultCorsMiddlewarePriority,
		Func: func(e *core.RequestEvent) error {
			p := e.Request.URL.Path
			switch {
			case strings.HasPrefix(p, "/api/") || p == "/_" || strings.HasPrefix(p, "/_/"):
				return pb.Func(e)
			case strings.HasPrefix(p, "/submit/"):
				return e.Next()
			}
			if e.Request.Header.Get("Origin") == "" {
				return e.Next() // not a browser's cross-origin request
			}
			h := e.Response.Header()
			h.Add("Vary", "Origin")
			if e.Request.Method != http.MethodOptions {
				if tok, _ := bearerToken(e.Request); tok != "" {
					h.Set("Access-Control-Allow-Origin", "*")
					h.Set("Access-Control-Expose-Headers", "Retry-After")
				}
				return e.Next()
			}
			// a preflight
			h.Add("Vary", "Access-Control-Request-Method")
			h.Add("Vary", "Access-Control-Request-Headers")
			asked := e.Request.Header.Get("Access-Control-Request-Headers")
			if headerListHas(asked, "Authorization") {
				h.Set("Access-Control-Allow-Origin", "*")
				h.Set("Access-Control-Allow-Methods", corsMethods)
				h.Set("Access-Control-Allow-Headers", asked)
				h.Set("Access-Control-Max-Age", "600")
			}
			return e.NoContent(http.StatusNoContent)
		},
	}
}

// headerListHas reports whether a comma-separated list of header names
// holds name.
func headerListHas(list, name string) bool {
	for _, h := range strings.Split(list, ",") {
		if strings.EqualFold(strings.TrimSpace(h), name) {
			return true
		}
	}
	return false
}

// anonymousRoutes are the routes that act without a key. A browser sends
// a simple POST (text/plain, form data) across origins without asking, so
// a page on another origin could make its visitors use them.
var anonymousRoutes = map[string]bool{
	"POST /deploy": true,
	"/mcp":         true, // an anonymous deploy through MCP
}

// anonCrossOriginGuard refuses, with 403, a request to an anonymousRoutes
// route that carries no Authorization header and that a browser sends from
// a page of another origin (Sec-Fetch-Site, else Origin against Host, as
// http.CrossOriginProtection decides; a site host is another origin).
// curl and scripts send neither header and keep deploying anonymously. It
// runs inside the JSON error middleware, so the refusal is
// {"error": "..."}.
func anonCrossOriginGuard() *hook.Handler[*core.RequestEvent] {
	return &hook.Handler[*core.RequestEvent]{
		Id:       "sitedropAnonCrossOrigin",
		Priority: apis.DefaultActivityLoggerMiddlewarePriority + 2,
		Func: func(e *core.RequestEvent) error {
			if !anonymousRoutes[e.Request.Pattern] {
				return e.Next()
			}
			if _, sent := bearerToken(e.Request); sent {
				return e.Next()
			}
			if crossOrigin.Check(e.Request) != nil {
				return fail(http.StatusForbidden, msgCrossOriginAnonDeploy)
			}
			return e.Next()
		},
	}
}

// logRedactMiddleware keeps secrets out of the request log (_logs):
// PocketBase's activity logger reads e.Request.URL.RequestURI() and the
// Referer header after the handlers have run, so this middleware, inside
// the logger, rewrites them (secret query values become REDACTED) once the
// handlers are done with the request. Claim links (/claim/<slug>?token=)
// and their Referer on the claim button's POST are the case in point.
func logRedactMiddleware() *hook.Handler[*core.RequestEvent] {
	return &hook.Handler[*core.RequestEvent]{
		Id:       "sitedropLogRedact",
		Priority: apis.DefaultActivityLoggerMiddlewarePriority + 1,
		Func: func(e *core.RequestEvent) error {
			defer func() { redactLoggedRequest(e.Request) }() // panics included
			return e.Next()
		},
	}
}

// redactLoggedRequest replaces r's URL and Referer with redacted copies.
func redactLoggedRequest(r *http.Request) {
	if q := safetext.RedactQuery(r.URL.RawQuery); q != r.URL.RawQuery {
		u := *r.URL
		u.RawQuery = q
		r.URL = &u
	}
	if ref := r.Header.Get("Referer"); ref != "" {
		if red := safetext.RedactURL(ref); red != ref {
			r.Header = r.Header.Clone()
			r.Header.Set("Referer", red)
		}
	}
}
