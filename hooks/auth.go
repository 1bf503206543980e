package hooks

import (
	"net/http"
	"strings"

	"sitedrop/sites/accounts"

	"github.com/pocketbase/pocketbase/apis"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/hook"
)

// bearerToken returns the token of an "Authorization: Bearer <token>"
// header and whether the header was sent at all.
func bearerToken(r *http.Request) (token string, sent bool) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return "", false
	}
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", true
	}
	return strings.TrimSpace(tok), true
}

// requireUser returns the user of the request's API key, or a 401.
// Without an Authorization header the browser session counts instead, when
// the request comes from the web host's own pages (see cookieUser).
func (sd *sitedrop) requireUser(e *core.RequestEvent) (*core.Record, error) {
	tok, sent := bearerToken(e.Request)
	if !sent {
		if user := sd.cookieUser(e); user != nil {
			return user, nil
		}
		return nil, fail(http.StatusUnauthorized, msgUnauthorized)
	}
	if tok == "" {
		return nil, fail(http.StatusUnauthorized, msgUnauthorized)
	}
	user, err := accounts.UserByAPIKey(e.App, tok)
	if err != nil {
		return nil, fail(http.StatusUnauthorized, msgUnauthorized)
	}
	return user, nil
}

// optionalUser returns the key's user, nil when no Authorization header was
// sent, and a 401 when one was sent but is not a valid key. Without the
// header a same-origin session counts (see cookieUser): the dashboard's
// deploys belong to the signed-in account.
func (sd *sitedrop) optionalUser(e *core.RequestEvent) (*core.Record, error) {
	if _, sent := bearerToken(e.Request); !sent {
		return sd.cookieUser(e), nil
	}
	return sd.requireUser(e)
}

// cookieUser is the session user of an API request that proves it comes
// from the web host's own pages (see fromOwnPages), nil otherwise: the
// dashboard's scripts call the API with the browser's cookie, while a page
// of another origin, a site host's included (same site, so its requests
// carry the SameSite=Lax cookie), is as anonymous as curl.
func (sd *sitedrop) cookieUser(e *core.RequestEvent) *core.Record {
	if !fromOwnPages(e.Request, sd.secure()) {
		return nil
	}
	return sd.sessionUser(e)
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

// msgBuiltinAuthClosed refuses PocketBase's auth endpoints that sitedrop
// does not use.
const msgBuiltinAuthClosed = "Not available: sign in through sitedrop's own /auth endpoints"

// closedBuiltinAuth are the route patterns of PocketBase's auth endpoints
// that no collection option turns off and that sitedrop's accounts must
// not reach: they mail (verification, e-mail change) or change the account
// (its e-mail, its unused password). The users collection's password, OTP
// and OAuth2 sign-in are off by its options (see migrations).
var closedBuiltinAuth = map[string]bool{
	"POST /api/collections/{collection}/request-verification":   true,
	"POST /api/collections/{collection}/confirm-verification":   true,
	"POST /api/collections/{collection}/request-email-change":   true,
	"POST /api/collections/{collection}/confirm-email-change":   true,
	"POST /api/collections/{collection}/confirm-password-reset": true,
}

// builtinAuthGuard refuses the closedBuiltinAuth endpoints for every auth
// collection but the superusers' (whose password reset is the dashboard's
// account recovery, rate limited). It runs before the handlers, so a known
// and an unknown address get the same 403 (in PocketBase's error shape, as
// all of /api/).
func builtinAuthGuard() *hook.Handler[*core.RequestEvent] {
	return &hook.Handler[*core.RequestEvent]{
		Id:       "sitedropBuiltinAuthGuard",
		Priority: apis.DefaultRateLimitMiddlewarePriority - 1,
		Func: func(e *core.RequestEvent) error {
			if !closedBuiltinAuth[e.Request.Pattern] {
				return e.Next()
			}
			c, err := e.App.FindCachedCollectionByNameOrId(e.Request.PathValue("collection"))
			if err != nil || c.Name == core.CollectionNameSuperusers {
				return e.Next() // PocketBase answers these itself
			}
			return e.ForbiddenError(msgBuiltinAuthClosed, nil)
		},
	}
}
