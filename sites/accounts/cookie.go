package accounts

import (
	"net/http"
	"strings"
	"time"

	"github.com/pocketbase/pocketbase/core"
)

// Sessions is the browser session service of the web host: its cookie,
// the user a cookie signs in, and the pages' one-shot messages (flashes)
// kept for each session. The pages, the sign-in endpoints and the API's
// same-origin calls share one.
//
//	s := accounts.NewSessions(app, func() bool { return behindTLS })
//	if err := s.Start(w, r, key, true); err != nil { … } // signs r's browser in
//	user := s.User(r)                                     // nil when signed out
type Sessions struct {
	app    core.App
	secure func() bool
	// flashes are the pages' one-shot messages (POST → redirect → GET).
	flashes Flashes
}

// NewSessions is the session service of app. secure reports, at each
// request, whether the web host is reached over TLS (so cookies get Secure
// and the __Host- prefix).
func NewSessions(app core.App, secure func() bool) *Sessions {
	return &Sessions{app: app, secure: secure}
}

// Secure reports whether the web host is reached over TLS.
func (s *Sessions) Secure() bool { return s.secure() }

// CookieName is the browser session cookie's name. Under TLS it carries
// the __Host- prefix, which makes browsers insist that it is Secure,
// host-only and for the whole path.
func (s *Sessions) CookieName() string {
	if s.Secure() {
		return "__Host-sitedrop_session"
	}
	return "sitedrop_session"
}

// setCookie hands the browser the session token (or, with maxAge < 0,
// tells it to drop its session). The cookie is HttpOnly, SameSite=Lax,
// host-only (no Domain: site hosts never see it) and Secure under TLS.
func (s *Sessions) setCookie(w http.ResponseWriter, token string, maxAge int) {
	http.SetCookie(w, &http.Cookie{
		Name:     s.CookieName(),
		Value:    token,
		Path:     "/",
		MaxAge:   maxAge,
		HttpOnly: true,
		Secure:   s.Secure(),
		SameSite: http.SameSiteLaxMode,
	})
}

// Token is the session cookie's value of r, "" without one.
func (s *Sessions) Token(r *http.Request) string {
	c, err := r.Cookie(s.CookieName())
	if err != nil {
		return ""
	}
	return c.Value
}

// User is the signed-in user of a browser request, nil when signed out.
func (s *Sessions) User(r *http.Request) *core.Record {
	user, err := UserBySession(s.app, s.Token(r))
	if err != nil {
		return nil
	}
	return user
}

// PageUser is the session user of an API request that proves it comes
// from the web host's own pages (see fromOwnPages), nil otherwise: the
// pages' scripts call the API with the browser's cookie, while a page of
// another origin, a site host's included (same site, so its requests
// carry the SameSite=Lax cookie), is as anonymous as curl.
func (s *Sessions) PageUser(r *http.Request) *core.Record {
	if !fromOwnPages(r, s.Secure()) {
		return nil
	}
	return s.User(r)
}

// fromOwnPages reports whether a browser says the request comes from the
// request's own origin: Sec-Fetch-Site: same-origin, or, from a browser
// that sends no Sec-Fetch-Site (plain http away from localhost), an Origin
// equal to the scheme and host the request was sent to. secure tells the
// scheme when TLS ends in front of sitedrop. No proof is no.
func fromOwnPages(r *http.Request, secure bool) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" {
		return site == "same-origin"
	}
	origin := r.Header.Get("Origin")
	if origin == "" || r.Host == "" {
		return false
	}
	scheme := "http"
	if secure || r.TLS != nil {
		scheme = "https"
	}
	return strings.EqualFold(origin, scheme+"://"+r.Host)
}

// IsCurrent reports whether rec is the session of r's browser.
func (s *Sessions) IsCurrent(r *http.Request, rec *core.Record) bool {
	return IsSessionOf(rec, s.Token(r))
}

// Start replaces the browser's session (if any) with a new one on key and
// sets its cookie on w; ownsKey says key was made for the session alone.
func (s *Sessions) Start(w http.ResponseWriter, r *http.Request, key *core.Record, ownsKey bool) error {
	if err := DeleteSession(r.Context(), s.app, s.Token(r)); err != nil {
		return err
	}
	tok, err := CreateSession(s.app, key, ownsKey, r.UserAgent())
	if err != nil {
		return err
	}
	s.setCookie(w, tok, int(SessionTTL/time.Second))
	return nil
}

// End signs the browser out: its session ends and its cookie goes.
func (s *Sessions) End(w http.ResponseWriter, r *http.Request) error {
	if err := DeleteSession(r.Context(), s.app, s.Token(r)); err != nil {
		return err
	}
	s.setCookie(w, "", -1)
	return nil
}

// EndOthers ends every session of user but r's browser's, and returns how
// many ended.
func (s *Sessions) EndOthers(r *http.Request, user *core.Record) (int, error) {
	recs, err := ListSessions(s.app, user)
	if err != nil {
		return 0, err
	}
	tok, n := s.Token(r), 0
	for _, rec := range recs {
		if IsSessionOf(rec, tok) {
			continue
		}
		if err := EndSession(r.Context(), s.app, rec); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// Flash queues f for the next page r's browser session loads. Without a
// session it does nothing.
func (s *Sessions) Flash(r *http.Request, f Flash) {
	if tok := s.Token(r); tok != "" {
		s.flashes.Add(HashSecret(tok), f, time.Now())
	}
}

// TakeFlashes returns and forgets the messages queued for the session of
// token.
func (s *Sessions) TakeFlashes(token string) []Flash {
	if token == "" {
		return nil
	}
	return s.flashes.Take(HashSecret(token), time.Now())
}
