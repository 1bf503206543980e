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

// sessions is the browser session service of the web host: its cookie,
// its signed-in user and the pages' one-shot messages (flashes). The
// pages, the sign-in endpoints and apiAuth share one.
type sessions struct {
	cfg *Config
	// flashes are the pages' one-shot messages (POST → redirect → GET).
	flashes flashStore
}

// newSessions builds the session service of cfg (read at each request:
// the listen scheme is learnt when serving starts).
func newSessions(cfg *Config) *sessions {
	return &sessions{cfg: cfg}
}

// secure reports whether the web host is reached over TLS, so cookies get
// Secure and the __Host- prefix (and the web host sends HSTS): when
// sitedrop serves TLS itself (--https; its plain listener only redirects)
// or when the public URL is https (a proxy in front ends TLS). The scheme
// is compared case-insensitively, as URLs have it.
func (s *sessions) secure() bool {
	if s.cfg.listenScheme == "https" {
		return true
	}
	u, err := url.Parse(strings.TrimSpace(s.cfg.PublicURL))
	return err == nil && u.Scheme == "https" // url.Parse lowercases it
}

// cookieName is the browser session cookie's name. Under TLS it
// carries the __Host- prefix, which makes browsers insist that it is
// Secure, host-only and for the whole path.
func (s *sessions) cookieName() string {
	if s.secure() {
		return "__Host-sitedrop_session"
	}
	return "sitedrop_session"
}

// setCookie hands the browser a new session. The cookie is
// HttpOnly, SameSite=Lax, host-only (no Domain: site hosts never see it)
// and Secure under TLS.
func (s *sessions) setCookie(e *core.RequestEvent, token string) {
	e.SetCookie(&http.Cookie{
		Name:     s.cookieName(),
		Value:    token,
		Path:     "/",
		MaxAge:   int(accounts.SessionTTL / time.Second),
		HttpOnly: true,
		Secure:   s.secure(),
		SameSite: http.SameSiteLaxMode,
	})
}

// clearCookie tells the browser to drop its session cookie.
func (s *sessions) clearCookie(e *core.RequestEvent) {
	e.SetCookie(&http.Cookie{
		Name:     s.cookieName(),
		Value:    "",
		Path:     "/",
		MaxAge:   -1,
		HttpOnly: true,
		Secure:   s.secure(),
		SameSite: http.SameSiteLaxMode,
	})
}

// token is the session cookie's value, "" without one.
func (s *sessions) token(e *core.RequestEvent) string {
	c, err := e.Request.Cookie(s.cookieName())
	if err != nil {
		return ""
	}
	return c.Value
}

// user is the signed-in user of a browser request, nil when signed
// out.
func (s *sessions) user(e *core.RequestEvent) *core.Record {
	tok := s.token(e)
	if tok == "" {
		return nil
	}
	user, err := accounts.UserBySession(e.App, tok)
	if err != nil {
		return nil
	}
	return user
}

// start replaces the browser's session (if any) with a new one on
// key.
func (s *sessions) start(e *core.RequestEvent, key *core.Record, ownsKey bool) error {
	if err := accounts.DeleteSession(e.App, s.token(e)); err != nil {
		return err
	}
	tok, err := accounts.CreateSession(e.App, key, ownsKey)
	if err != nil {
		return err
	}
	s.setCookie(e, tok)
	return nil
}

// end signs the browser out: its session ends and its cookie goes.
func (s *sessions) end(e *core.RequestEvent) error {
	if err := accounts.DeleteSession(e.App, s.token(e)); err != nil {
		return err
	}
	s.clearCookie(e)
	return nil
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
