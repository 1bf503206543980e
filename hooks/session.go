package hooks

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/hooks/internal/apierr"
	"sitedrop/hooks/pages"
	"sitedrop/sites/accounts"
)

// newSessions builds the browser session service of app, as the pages
// use it (pages.Sessions); the pages, the sign-in endpoints and apiAuth
// share one. cfg is read at each request (the listen scheme is learnt
// when serving starts).
func newSessions(app core.App, cfg *Config) *pages.Sessions {
	return &pages.Sessions{Sessions: accounts.NewSessions(app, func() bool { return webOverTLS(cfg) })}
}

// newAdminSessions are the moderation page's superuser sessions, whose
// cookie is Secure and __Host- when the web host is reached over TLS.
func newAdminSessions(app core.App, cfg *Config) *accounts.AdminSessions {
	return accounts.NewAdminSessions(app, func() bool { return webOverTLS(cfg) })
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

// crossOrigin guards cookie-authenticated state changes: a browser request
// from another origin (a site host included) is refused.
var crossOrigin = http.NewCrossOriginProtection()

// checkOrigin returns a 403 for a cross-origin browser request.
func checkOrigin(e *core.RequestEvent) error {
	if err := crossOrigin.Check(e.Request); err != nil {
		return apierr.Fail(http.StatusForbidden, "Cross-origin request refused")
	}
	return nil
}

// userJSON is the user object of the auth answers.
func userJSON(u *core.Record) map[string]string {
	return map[string]string{"id": u.Id, "email": u.Email(), "plan": accounts.UserOf(u).Plan()}
}
