package hooks

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites/accounts"
	"sitedrop/ui"
)

// secure reports whether the web host is reached over TLS, so cookies get
// Secure and the __Host- prefix (and the web host sends HSTS): when
// sitedrop serves TLS itself (--https; its plain listener only redirects)
// or when the public URL is https (a proxy in front ends TLS). The scheme
// is compared case-insensitively, as URLs have it.
func (sd *sitedrop) secure() bool {
	if sd.cfg.listenScheme == "https" {
		return true
	}
	u, err := url.Parse(strings.TrimSpace(sd.cfg.PublicURL))
	return err == nil && u.Scheme == "https" // url.Parse lowercases it
}

// sessionCookieName is the browser session cookie's name. Under TLS it
// carries the __Host- prefix, which makes browsers insist that it is
// Secure, host-only and for the whole path.
func (sd *sitedrop) sessionCookieName() string {
	if sd.secure() {
		return "__Host-sitedrop_session"
	}
	return "sitedrop_session"
}

// setSessionCookie hands the browser a new session. The cookie is
// HttpOnly, SameSite=Lax, host-only (no Domain: site hosts never see it)
// and Secure under TLS.
func (sd *sitedrop) setSessionCookie(e *core.RequestEvent, token string) {
	e.SetCookie(&http.Cookie{
		Name:     sd.sessionCookieName(),
		Value:    token,
		Path:     "/",
		MaxAge:   int(accounts.SessionTTL / time.Second),
		HttpOnly: true,
		Secure:   sd.secure(),
		SameSite: http.SameSiteLaxMode,
	})
}

// clearSessionCookie tells the browser to drop its session cookie.
func (sd *sitedrop) clearSessionCookie(e *core.RequestEvent) {
	e.SetCookie(&http.Cookie{
		Name:     sd.sessionCookieName(),
		Value:    "",
		Path:     "/",
		MaxAge:   -1,
		HttpOnly: true,
		Secure:   sd.secure(),
		SameSite: http.SameSiteLaxMode,
	})
}

// sessionToken is the session cookie's value, "" without one.
func (sd *sitedrop) sessionToken(e *core.RequestEvent) string {
	c, err := e.Request.Cookie(sd.sessionCookieName())
	if err != nil {
		return ""
	}
	return c.Value
}

// sessionUser is the signed-in user of a browser request, nil when signed
// out.
func (sd *sitedrop) sessionUser(e *core.RequestEvent) *core.Record {
	tok := sd.sessionToken(e)
	if tok == "" {
		return nil
	}
	user, err := accounts.UserBySession(e.App, tok)
	if err != nil {
		return nil
	}
	return user
}

// layout is what the page frame shows about the visitor.
func layout(user *core.Record) ui.LayoutProps {
	if user == nil {
		return ui.LayoutProps{}
	}
	return ui.LayoutProps{SignedIn: true, Email: user.Email()}
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
