package hooks

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites/accounts"
	"sitedrop/ui"
)

// sessions is the browser session service (accounts.Sessions) as the
// pages use it: the user of a request event, the page frame with the
// messages a form post left, the error page. The pages, the sign-in
// endpoints and apiAuth share one.
type sessions struct {
	*accounts.Sessions
}

// newSessions builds the session service of app; cfg is read at each
// request (the listen scheme is learnt when serving starts).
func newSessions(app core.App, cfg *Config) *sessions {
	return &sessions{accounts.NewSessions(app, func() bool { return webOverTLS(cfg) })}
}

// webOverTLS reports whether the web host is reached over TLS, so cookies
// get Secure and the __Host- prefix (and the web host sends HSTS): when
// sitedrop serves TLS itself (--https; its plain listener only redirects)
// or when the public URL is https (a proxy in front ends TLS). The scheme
// is compared case-insensitively, as URLs have it.
func webOverTLS(cfg *Config) bool {
	if cfg.listenScheme == "https" {
		return true
	}
	u, err := url.Parse(strings.TrimSpace(cfg.PublicURL))
	return err == nil && u.Scheme == "https" // url.Parse lowercases it
}

// user is the signed-in user of a browser request, nil when signed out.
func (s *sessions) user(e *core.RequestEvent) *core.Record {
	return s.User(e.Request)
}

// flash queues f (which may carry a secret shown once) for the next page
// this browser session loads. Without a session it does nothing.
func (s *sessions) flash(e *core.RequestEvent, f ui.Flash) {
	s.Flash(e.Request, accounts.Flash(f))
}

// back answers a form post: the message for the next page, and 303 to the
// page to (POST → redirect → GET).
func (s *sessions) back(e *core.RequestEvent, to, kind, text string) error {
	s.flash(e, ui.Flash{Kind: kind, Text: text})
	return e.Redirect(http.StatusSeeOther, to)
}

// backToPanel answers a form post of a page made of panels: the message
// for the panel (the id of the panel or row holding the form) of the next
// page, and 303 to the page to, scrolled to that panel (to#panel).
func (s *sessions) backToPanel(e *core.RequestEvent, to, panel, kind, text string) error {
	s.flash(e, ui.Flash{Kind: kind, Text: text, Panel: panel})
	return e.Redirect(http.StatusSeeOther, to+"#"+panel)
}

// layout is what the page frame shows about the visitor: who is signed
// in, and the messages left by the form post that led here (taken, so a
// reload shows them no more).
func (s *sessions) layout(e *core.RequestEvent, user *core.Record) ui.LayoutProps {
	if user == nil {
		return ui.LayoutProps{}
	}
	lp := ui.LayoutProps{SignedIn: true, Email: user.Email()}
	for _, f := range s.TakeFlashes(s.Token(e.Request)) {
		lp.Flashes = append(lp.Flashes, ui.Flash(f))
	}
	return lp
}

// errorPage answers a browser with an HTML error page.
func (s *sessions) errorPage(e *core.RequestEvent, status int, title, msg string) error {
	return render(e, status, ui.ErrorPage(s.layout(e, s.user(e)), ui.ErrorProps{
		Status: status, Title: title, Message: msg, LinkURL: "/", LinkText: "Back to the start",
	}))
}

// crossOrigin guards cookie-authenticated state changes: a browser request
// from another origin (a site host included) is refused.
var crossOrigin = http.NewCrossOriginProtection()

// checkOrigin returns a 403 for a cross-origin browser request.
func checkOrigin(e *core.RequestEvent) error {
	if err := crossOrigin.Check(e.Request); err != nil {
		return fail(http.StatusForbidden, "Cross-origin request refused")
	}
	return nil
}

// userJSON is the user object of the auth answers.
func userJSON(u *core.Record) map[string]string {
	return map[string]string{"id": u.Id, "email": u.Email(), "plan": accounts.UserOf(u).Plan()}
}
