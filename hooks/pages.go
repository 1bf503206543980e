package hooks

import (
	"io/fs"
	"net/http"
	"net/url"
	"strings"

	"github.com/a-h/templ"
	"github.com/pocketbase/pocketbase/apis"
	"github.com/pocketbase/pocketbase/core"

	"sitedrop/ui"
)

// bindPages registers the web pages of the web host.
func bindPages(sd *sitedrop, se *core.ServeEvent) {
	assets, _ := fs.Sub(ui.Assets, "assets")
	se.Router.GET("/static/{path...}", apis.Static(assets, false)) // embedded CSS and scripts
	se.Router.GET("/{$}", sd.homePage)                             // landing page
	se.Router.GET("/llms.txt", sd.llmsTxt)                         // how an agent publishes here
	se.Router.GET("/claim/{slug}", sd.claimPage)                   // claim link of an anonymous deploy
	se.Router.POST("/claim/{slug}", sd.claimSubmit)                // its "claim" button
	se.Router.GET("/account", sd.accountPage)                      // the signed-in user's sites and keys
	se.Router.POST("/account/keys", sd.accountKeyCreate)           // new API key, shown once
	se.Router.POST("/account/keys/{id}/revoke", sd.accountKeyRevoke)
	se.Router.GET("/account/sessions/{id}/revoke", sd.sessionRevokeConfirm) // asks first
	se.Router.POST("/account/sessions/{id}/revoke", sd.sessionRevoke)
	se.Router.POST("/account/sessions/revoke-others", sd.sessionRevokeOthers) // sign out everywhere else
	bindWebNotFound(sd, se)                                                   // every other path
}

// pageCSP is the Content-Security-Policy of the web pages.
const pageCSP = "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// render writes a page with status, rendering first so that a template
// error is still a clean 500.
func render(e *core.RequestEvent, status int, c templ.Component) error {
	html, err := ui.RenderString(e.Request.Context(), c)
	if err != nil {
		return err
	}
	h := e.Response.Header()
	h.Set("Cache-Control", "no-store")
	// Pages load only their own assets; claim tokens in URLs go nowhere.
	h.Set("Content-Security-Policy", pageCSP)
	h.Set("Referrer-Policy", "same-origin")
	return e.HTML(status, html)
}

// errorPage answers a browser with an HTML error page.
func (s *sessions) errorPage(e *core.RequestEvent, status int, title, msg string) error {
	return render(e, status, ui.ErrorPage(s.layout(e, s.user(e)), ui.ErrorProps{
		Status: status, Title: title, Message: msg, LinkURL: "/", LinkText: "Back to the start",
	}))
}

// homePage is GET /: what this server is, with a curl example.
func (sd *sitedrop) homePage(e *core.RequestEvent) error {
	user := sd.sessions.user(e)
	return render(e, http.StatusOK, ui.Home(sd.sessions.layout(e, user), ui.HomeProps{
		WebURL:         sd.cfg.webURL(),
		SiteURLExample: sd.cfg.siteURL("your-site"),
		Drop:           sd.dropProps("Drop a folder to publish it", user, ""),
	}))
}

// safeNext keeps a ?next= target only when it is a path on this host
// (no scheme, no other host, no //host or /\host tricks); else /account.
func safeNext(next string) string {
	const fallback = "/account"
	if next == "" || !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") {
		return fallback
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || strings.ContainsAny(next, "\r\n\t") {
		return fallback
	}
	return next
}

// loginURL is the sign-in page that comes back to next.
func loginURL(next string) string {
	return "/auth/login?next=" + url.QueryEscape(next)
}
