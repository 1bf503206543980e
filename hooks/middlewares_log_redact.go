package hooks

import (
	"net/http"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/hook"

	"sitedrop/sites/safetext"
)

// logRedactMiddleware keeps secrets out of the request log (_logs):
// PocketBase's activity logger reads e.Request.URL.RequestURI() and the
// Referer header after the handlers have run, so this middleware, inside
// the logger, rewrites them (safetext.RedactQuery: secret query values
// become REDACTED) once the handlers are done with the request. Claim
// links (/claim/<slug>?token=) and their Referer on the claim button's
// POST are the case in point.
func logRedactMiddleware() *hook.Handler[*core.RequestEvent] {
	return &hook.Handler[*core.RequestEvent]{
		Id:       logRedactMiddlewareId,
		Priority: logRedactMiddlewarePriority,
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
