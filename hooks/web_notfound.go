package hooks

import (
	"net/http"
	"strings"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/router"

	"sitedrop/hooks/server"
	"sitedrop/ui"
)

// bindWebNotFound answers the web host's paths that no route has (they
// reach PocketBase's catch-all "/" pattern, which this replaces):
//
//   - GET /favicon.ico is the pages' emoji icon, as SVG.
//   - GET or HEAD of a path with a trailing slash redirects (308) to the
//     path without it, query kept, as Netlify's pretty URLs do: /account/
//     is /account. The target answers for itself (a 404 if nothing is there).
//   - Anything else is a 404: the styled page for browsers (Accept:
//     text/html), {"error": "Not found"} for API clients.
//
// /api/ and /_/ keep PocketBase's own 404.
func bindWebNotFound(r *router.Router[*core.RequestEvent], s *sessions) {
	r.GET("/favicon.ico", faviconICO)
	r.Route("", "/", func(e *core.RequestEvent) error { return webNotFound(e, s) })
}

// webNotFound is the catch-all route (see bindWebNotFound); s renders the
// browsers' page.
func webNotFound(e *core.RequestEvent, s *sessions) error {
	p := e.Request.URL.Path
	if strings.HasPrefix(p, "/api/") || p == "/_" || strings.HasPrefix(p, "/_/") {
		return router.NewNotFoundError("", nil)
	}
	if loc, ok := server.WithoutTrailingSlash(e.Request); ok {
		return e.Redirect(http.StatusPermanentRedirect, loc)
	}
	if wantsHTML(e.Request) {
		return s.errorPage(e, http.StatusNotFound, "Page not found",
			"There is no page at this address. Check it for typing mistakes, or start again from the home page.")
	}
	return fail(http.StatusNotFound, msgRouteNotFound)
}

// faviconICO is GET /favicon.ico: the emoji icon the pages link to, which
// browsers also ask for by this name.
func faviconICO(e *core.RequestEvent) error {
	svg, err := ui.Assets.ReadFile("assets/favicon.svg")
	if err != nil {
		return err
	}
	e.Response.Header().Set("Cache-Control", "public, max-age=86400")
	return e.Blob(http.StatusOK, "image/svg+xml", svg)
}
