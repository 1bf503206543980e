package hooks

import (
	"net/http"
	"time"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/hook"

	"sitedrop/hooks/internal/apierr"
	"sitedrop/sites/ratelimit"
)

// Rate limits of the dashboard's superuser sign-in, per client (the same
// key as sitedrop's other limits: --trusted-proxies believed, an IPv6
// client counted by its /64) and per endpoint.
const (
	// superuserAuthTries sign-in tries (password, OTP or MFA step,
	// OAuth2, password-reset confirmation) per superuserAuthWindow.
	superuserAuthTries  = 5
	superuserAuthWindow = time.Minute
	// superuserMailTries mails (sign-in code, password reset) per
	// superuserMailWindow.
	superuserMailTries  = 3
	superuserMailWindow = 10 * time.Minute
)

// superuserSignInLimits maps the route patterns of PocketBase's sign-in
// endpoints to the limit each gets for the superusers collection.
type superuserSignInLimits map[string]*ratelimit.Limiter

func newSuperuserSignInLimits() superuserSignInLimits {
	const c = "POST /api/collections/{collection}/"
	tries := func() *ratelimit.Limiter { return ratelimit.New(superuserAuthTries, superuserAuthWindow) }
	mails := func() *ratelimit.Limiter { return ratelimit.New(superuserMailTries, superuserMailWindow) }
	return superuserSignInLimits{
		c + "auth-with-password":     tries(),
		c + "auth-with-otp":          tries(),
		c + "auth-with-oauth2":       tries(),
		c + "confirm-password-reset": tries(),
		c + "request-otp":            mails(),
		c + "request-password-reset": mails(),
	}
}

// superuserSignInLimit limits the superuser sign-in of the dashboard. It
// is sitedrop's own rather than PocketBase's rate limiter, which counts
// by PocketBase's idea of the client address (not --trusted-proxies, and
// an IPv6 address alone): behind a proxy anyone could spend every
// administrator's tries, and over IPv6 one client could have endless ones.
// A signed-in superuser is not limited; rateKey is the client a limit
// counts (server.TrustedProxies.RateKey). The answer is PocketBase's 429,
// as all of /api/, with Retry-After.
func superuserSignInLimit(rateKey func(*http.Request) string) *hook.Handler[*core.RequestEvent] {
	limits := newSuperuserSignInLimits()
	return &hook.Handler[*core.RequestEvent]{
		Id:       superuserSignInLimitMiddlewareId,
		Priority: superuserSignInLimitMiddlewarePriority,
		Func: func(e *core.RequestEvent) error {
			l := limits[e.Request.Pattern]
			if l == nil || e.HasSuperuserAuth() {
				return e.Next()
			}
			c, err := e.App.FindCachedCollectionByNameOrId(e.Request.PathValue("collection"))
			if err != nil || c.Name != core.CollectionNameSuperusers {
				return e.Next()
			}
			if apierr.RateRefusal(e.Response, l.Check(rateKey(e.Request))) != nil { // sets Retry-After
				return e.TooManyRequestsError("", nil)
			}
			return e.Next()
		},
	}
}
