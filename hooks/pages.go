package hooks

import (
	"io/fs"
	"net/http"
	"net/url"
	"strings"

	"github.com/a-h/templ"
	"github.com/pocketbase/pocketbase/apis"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/router"

	"sitedrop/sites"
	"sitedrop/sites/accounts"
	"sitedrop/sites/intake"
	"sitedrop/ui"
)

// bindPages registers the web pages of the web host; the account's behind
// a signed-in user (auth), its forms once read (pageForm).
// llms is the GET /llms.txt handler (how an agent publishes here).
func bindPages(r *router.Router[*core.RequestEvent], auth *pageAuth, home *homePage, llms func(*core.RequestEvent) error, claims *claimPages, account *accountPages) {
	assets, _ := fs.Sub(ui.Assets, "assets")
	r.GET("/static/{path...}", apis.Static(assets, false))                // embedded CSS and scripts
	r.GET("/{$}", home.serve)                                             // landing page
	r.GET("/llms.txt", llms)                                              // how an agent publishes here
	r.GET("/claim/{slug}", claims.claimPage)                              // claim link of an anonymous deploy
	r.POST("/claim/{slug}", claims.claimSubmit).Bind(auth.pageForm())     // its "claim" button
	r.GET("/account", account.accountPage).Bind(auth.requirePageUser("")) // the user's sites and keys
	r.GET("/account/keys/{id}/revoke", account.accountKeyRevokeConfirm).  // asks first
										Bind(auth.requirePageUser("/account"))
	r.GET("/account/delete", account.accountDeletePage). // what goes, and the confirmation
								Bind(auth.requirePageUser("/account"))
	forms := r.Group("/account").Bind(auth.pageForm(), auth.requirePageUser("/account"))
	forms.POST("/keys", account.accountKeyCreate) // new API key, shown once
	forms.POST("/keys/{id}/revoke", account.accountKeyRevoke)
	forms.POST("/delete", account.accountDelete) // the account and everything in it
	forms.POST("/sessions/{id}/revoke", account.sessionRevoke)
	forms.POST("/sessions/revoke-others", account.sessionRevokeOthers) // sign out everywhere else
	bindWebNotFound(r, account.sessions)                               // every other path
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

// homePage is the landing page: what this server is, with a curl example.
type homePage struct {
	cfg      *Config
	links    sites.Links // the addresses given out, built at serve time
	sessions *sessions
}

// serve is GET /.
func (h *homePage) serve(e *core.RequestEvent) error {
	user := h.sessions.user(e)
	return render(e, http.StatusOK, ui.Home(farewell(e, h.sessions.layout(e, user)), ui.HomeProps{
		WebURL:         h.links.Web(),
		SiteURLExample: h.links.Site("your-site"),
		Drop:           dropProps(h.cfg, "Drop a folder to publish it", user, ""),
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

// dropProps configures a page's drop zone (ui.DropDeploy): a new site for
// user (anonymous when nil), or a re-deploy of deploymentID, within the
// server's limits. The zone's script calls the API with the session
// cookie (see accounts.Sessions.PageUser), and refuses before it uploads
// anything what these limits announce: a new site when the plan's
// SlotLimit is reached (counted with GET /deploys), a site larger than
// MaxSite (what intake loads for a deploy by sha256, or what an anonymous
// client may store).
func dropProps(cfg *Config, heading string, user *core.Record, deploymentID string) ui.DropProps {
	p := ui.DropProps{
		Heading:     heading,
		DeployID:    deploymentID,
		Owner:       user != nil,
		MaxFiles:    cfg.MaxFiles,
		MaxBody:     cfg.MaxBody,
		MaxBodyText: sites.FormatBytes(cfg.MaxBody),
		MaxSite:     intake.ArchiveUnpackFactor * cfg.MaxBody,
	}
	if user == nil {
		p.MaxSite = cfg.AnonStoragePerIP
		return p
	}
	if deploymentID == "" {
		p.SlotLimit = cfg.FreeSlots
		if accounts.UserOf(user).Plan() == sites.PlanPro {
			p.SlotLimit = cfg.ProSlots
		}
	}
	return p
}
