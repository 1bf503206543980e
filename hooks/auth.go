package hooks

import (
	"errors"
	"net/http"
	"strings"

	"sitedrop/hooks/internal/apierr"
	"sitedrop/hooks/internal/routectx"
	"sitedrop/hooks/pages"
	"sitedrop/sites"
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

// apiAuth authenticates API requests, bound at the route (PocketBase's
// RequireSuperuserOrOwnerAuth shape): an API key in "Authorization:
// Bearer", or the browser session of a request from the web host's own
// pages. A handler behind one of its middlewares reads the caller with
// userOf and the deployment with ownedOf; it never starts with an auth call.
type apiAuth struct {
	// sessions gives the user of the request's session cookie, and tells
	// that TLS ends in front of sitedrop (the scheme of fromOwnPages).
	sessions *pages.Sessions
	// deploys finds the caller's deployments (requireOwner).
	deploys *sites.Service
}

// requireUser refuses a request without a valid API key (or same-origin
// session) with the contract's 401 and leaves the user on the event.
func (a *apiAuth) requireUser() *hook.Handler[*core.RequestEvent] {
	return middleware("sitedropRequireUser", func(e *core.RequestEvent) error {
		user, err := a.user(e)
		if err != nil {
			return err
		}
		routectx.SetUser(e, user)
		return e.Next()
	})
}

// loadUser leaves the caller on the event when there is one (nil when no
// Authorization header was sent and no same-origin session), and refuses a
// header that is not a valid key with a 401: anonymous deploys are allowed,
// a wrong key is not taken for none.
func (a *apiAuth) loadUser() *hook.Handler[*core.RequestEvent] {
	return middleware("sitedropLoadUser", func(e *core.RequestEvent) error {
		user, err := a.caller(e)
		if err != nil {
			return err
		}
		routectx.SetUser(e, user)
		return e.Next()
	})
}

// requireOwner authenticates the request as requireUser does and loads the
// caller's deployment named by the path value param, refusing anyone
// else's (or none) with the contract's 404. The user and the deployment are
// left on the event.
func (a *apiAuth) requireOwner(param string) *hook.Handler[*core.RequestEvent] {
	return middleware("sitedropRequireOwner", func(e *core.RequestEvent) error {
		user, err := a.user(e)
		if err != nil {
			return err
		}
		dep, err := a.deploys.FindOwned(user, e.Request.PathValue(param))
		if err != nil {
			return err
		}
		routectx.SetUser(e, user)
		routectx.SetDeployment(e, dep)
		return e.Next()
	})
}

// user returns the caller (see caller), or the contract's 401 for none.
func (a *apiAuth) user(e *core.RequestEvent) (*core.Record, error) {
	user, err := a.caller(e)
	if err == nil && user == nil {
		err = apierr.Fail(http.StatusUnauthorized, msgUnauthorized)
	}
	return user, err
}

// caller is the user of the request's API key, or a 401 for a header that
// is not a valid key (a 403 for a banned account's key). Without an Authorization header the browser session
// counts instead, when the request comes from the web host's own pages
// (accounts.Sessions.PageUser); nil when there is none.
func (a *apiAuth) caller(e *core.RequestEvent) (*core.Record, error) {
	tok, sent := bearerToken(e.Request)
	if !sent {
		return a.sessions.PageUser(e.Request), nil
	}
	user, err := accounts.UserByAPIKey(e.App, tok)
	var be *accounts.BannedError
	if errors.As(err, &be) {
		return nil, bannedAPIError(be)
	}
	if err != nil {
		return nil, apierr.Fail(http.StatusUnauthorized, msgUnauthorized)
	}
	return user, nil
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

// The request event's caller and deployment, and the middleware shape:
// routectx's, shared with the other side (API or pages).
var (
	middleware = routectx.Middleware
	userOf     = routectx.User
	ownedOf    = routectx.Deployment
	timestamp  = routectx.Timestamp
)
