package pages

import (
	"errors"
	"net/http"
	"strings"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/router"

	"sitedrop/hooks/internal/apierr"
	"sitedrop/hooks/server"
	"sitedrop/ui"
)

// bindWebNotFound answers the web host's paths that no route has (they
// reach PocketBase's catch-all "/" pattern, which this replaces):
//
//   - GET /favicon.ico is the pages' emoji icon, as SVG.
//   - GET /robots.txt keeps crawlers out of the pages that are a person's
//     own (account, claim links, sign-in); site hosts serve their sites'
//     own robots.txt, never this one.
//   - GET or HEAD of a path with a trailing slash redirects (308) to the
//     path without it, query kept, as Netlify's pretty URLs do: /account/
//     is /account. The target answers for itself (a 404 if nothing is there).
//   - Anything else is a 404: the styled page for browsers (Accept:
//     text/html), {"error": "Not found"} for API clients.
//
// /api/ keeps PocketBase's own 404, and so does /_/ for API clients; a
// browser asking for a page under /_/ that the admin dashboard lacks gets
// the styled 404 (AdminNotFound, which the caller binds).
func bindWebNotFound(r *router.Router[*core.RequestEvent], s *Sessions) {
	r.GET("/favicon.ico", faviconICO)
	r.GET("/robots.txt", robotsTxt)
	r.Route("", "/", func(e *core.RequestEvent) error { return webNotFound(e, s) })
}

// webNotFound is the catch-all route (see bindWebNotFound); s renders the
// browsers' page.
func webNotFound(e *core.RequestEvent, s *Sessions) error {
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
	return apierr.Fail(http.StatusNotFound, apierr.MsgRouteNotFound)
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

// robots is the web host's robots.txt: the public pages (home, llms.txt,
// the API description) may be crawled; a person's own pages and one-time
// links may not.
const robots = `User-agent: *
Disallow: /account
Disallow: /claim
Disallow: /auth
`

// robotsTxt is GET /robots.txt on the web host.
func robotsTxt(e *core.RequestEvent) error {
	e.Response.Header().Set("Cache-Control", "public, max-age=86400")
	return e.Blob(http.StatusOK, "text/plain; charset=utf-8", []byte(robots))
}

// AdminNotFound is the middleware that answers a browser's GET of a path
// under /_/ that the admin dashboard has no file for (PocketBase's 404,
// JSON) with the styled 404 page linking to the dashboard; API clients
// (no Accept: text/html) keep PocketBase's JSON. The caller binds it
// where the JSON errors are made.
func AdminNotFound(s *Sessions) func(e *core.RequestEvent) error {
	return func(e *core.RequestEvent) error {
		r := e.Request
		if !strings.HasPrefix(r.URL.Path, "/_/") || (r.Method != http.MethodGet && r.Method != http.MethodHead) || !wantsHTML(r) {
			return e.Next()
		}
		err := e.Next()
		var re *router.ApiError
		if err == nil || e.Written() || !errors.As(err, &re) || re.Status != http.StatusNotFound {
			return err
		}
		return Render(e, http.StatusNotFound, ui.ErrorPage(s.layout(e, s.user(e)), ui.ErrorProps{
			Status: http.StatusNotFound, Title: "Page not found",
			Message: "The admin dashboard has no page at this address.",
			LinkURL: "/_/", LinkText: "Open the admin dashboard",
		}))
	}
}
