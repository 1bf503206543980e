package pages

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/a-h/templ"
	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
	"sitedrop/sites/accounts"
	"sitedrop/sites/intake"
	"sitedrop/ui"
)

// pageCSP is the Content-Security-Policy of the web pages.
const pageCSP = "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// Render writes a page with status, rendering first so that a template
// error is still a clean 500.
func Render(e *core.RequestEvent, status int, c templ.Component) error {
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
	limits   Limits
	links    sites.Links // the addresses given out, built at serve time
	sessions *Sessions
}

// serve is GET /.
func (h *homePage) serve(e *core.RequestEvent) error {
	user := h.sessions.user(e)
	anon := h.limits.Anon()
	return Render(e, http.StatusOK, ui.Home(farewell(e, h.sessions.layout(e, user)), ui.HomeProps{
		WebURL:         h.links.Web(),
		SiteURLExample: h.links.Site("your-site"),
		Drop:           dropProps(h.limits, "Drop a folder to publish it", user, ""),
		AnonTTL:        ui.TimeLeft(anon.TTL),
		AnonOff:        !anon.Enabled,
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
func dropProps(l Limits, heading string, user *core.Record, deploymentID string) ui.DropProps {
	p := ui.DropProps{
		Heading:     heading,
		DeployID:    deploymentID,
		Owner:       user != nil,
		MaxFiles:    l.MaxFiles,
		MaxBody:     l.MaxBody,
		MaxBodyText: sites.FormatBytes(l.MaxBody),
		MaxSite:     intake.ArchiveUnpackFactor * l.MaxBody,
	}
	if user == nil {
		p.MaxSite = l.Anon().StoragePerIP
		return p
	}
	if deploymentID == "" {
		p.SlotLimit = l.FreeSlots
		if accounts.UserOf(user).Plan() == sites.PlanPro {
			p.SlotLimit = l.ProSlots
		}
	}
	return p
}
