package pages

import (
	"net/http"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/hooks/internal/routectx"
	"sitedrop/sites/accounts"
	"sitedrop/ui"
)

// Sessions is the browser session service (accounts.Sessions) as the
// pages use it: the user of a request event, the page frame with the
// messages a form post left, the error page. The pages, the sign-in
// endpoints and hooks' apiAuth share one.
type Sessions struct {
	*accounts.Sessions
}

// user is the signed-in user of a browser request, nil when signed out.
func (s *Sessions) user(e *core.RequestEvent) *core.Record {
	return s.User(e.Request)
}

// flash queues f (which may carry a secret shown once) for the next page
// this browser session loads. Without a session it does nothing.
func (s *Sessions) flash(e *core.RequestEvent, f ui.Flash) {
	s.Flash(e.Request, accounts.Flash(f))
}

// back answers a form post: the message for the next page, and 303 to the
// page to (POST → redirect → GET).
func (s *Sessions) back(e *core.RequestEvent, to, kind, text string) error {
	s.flash(e, ui.Flash{Kind: kind, Text: text})
	return e.Redirect(http.StatusSeeOther, to)
}

// backToPanel answers a form post of a page made of panels: the message
// for the panel (the id of the panel or row holding the form) of the next
// page, and 303 to the page to, scrolled to that panel (to#panel).
func (s *Sessions) backToPanel(e *core.RequestEvent, to, panel, kind, text string) error {
	s.flash(e, ui.Flash{Kind: kind, Text: text, Panel: panel})
	return e.Redirect(http.StatusSeeOther, to+"#"+panel)
}

// layout is what the page frame shows about the visitor: who is signed
// in, and the messages left by the form post that led here (taken, so a
// reload shows them no more).
func (s *Sessions) layout(e *core.RequestEvent, user *core.Record) ui.LayoutProps {
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
func (s *Sessions) errorPage(e *core.RequestEvent, status int, title, msg string) error {
	return Render(e, status, ui.ErrorPage(s.layout(e, s.user(e)), ui.ErrorProps{
		Status: status, Title: title, Message: msg, LinkURL: "/", LinkText: "Back to the start",
	}))
}

// Frame is the page frame of e's visitor (see layout), for a page
// rendered outside this package (Render).
func (s *Sessions) Frame(e *core.RequestEvent) ui.LayoutProps {
	return s.layout(e, s.user(e))
}

// SignOut ends e's browser session (accounts.Sessions.End). The signed-in
// user is left on e first, as the auth middlewares do, so that the audit
// log names them, not an anonymous client, as who revoked the key made
// for the session.
func (s *Sessions) SignOut(e *core.RequestEvent) error {
	if routectx.User(e) == nil {
		if u := s.user(e); u != nil {
			routectx.SetUser(e, u)
		}
	}
	return s.End(e.Response, e.Request)
}
