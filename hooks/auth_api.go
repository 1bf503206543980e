package hooks

import (
	"context"
	"errors"
	"net/http"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/hook"
	"github.com/pocketbase/pocketbase/tools/router"

	"sitedrop/hooks/internal/apierr"
	"sitedrop/hooks/pages"
	"sitedrop/hooks/server"
	"sitedrop/sites"
	"sitedrop/sites/accounts"
	"sitedrop/sites/audit"
	"sitedrop/sites/intake"
	"sitedrop/sites/ratelimit"
)

// authBodyLimit bounds the small JSON bodies of the sign-in endpoints.
const authBodyLimit = 4 << 10

// signInDesk is the sign-in endpoints and page: codes mailed and verified,
// browser sessions started and ended, within the per-client limits.
type signInDesk struct {
	cfg   *Config
	links sites.Links // the addresses given out, built at serve time
	// limits are the per-client (and per-address) sign-in limits.
	limits *authLimits
	// proxies tell the client the limits count (RateKey).
	proxies server.TrustedProxies
	// sessions are the browser sessions the sign-in starts and ends.
	sessions *pages.Sessions
	// guards read the JSON bodies.
	guards *intake.Guards
	// blocks refuse a new account from a blocked e-mail domain.
	blocks *sites.Blocklist
}

// bindAuthAPI registers the sign-in endpoints; whoami behind auth.
func bindAuthAPI(r *router.Router[*core.RequestEvent], a *signInDesk, auth *apiAuth) {
	// A cross-site form could otherwise sign a visitor in as the attacker,
	// or out: every change is refused from another origin, first.
	r.POST("/auth/otp", a.authOTP).Bind(requireSameOrigin(), a.perClient(a.limits.otp))                   // mail a sign-in code
	r.POST("/auth/verify", a.authVerify).Bind(requireSameOrigin(), a.perClient(a.limits.verify))          // code → API key + session
	r.POST("/auth/session", a.authSessionCreate).Bind(requireSameOrigin(), a.perClient(a.limits.session)) // API key → session
	r.DELETE("/auth/session", a.authSessionDelete).Bind(requireSameOrigin())
	r.GET("/auth/whoami", a.authWhoami).Bind(auth.requireUser()) // API key → its user
	r.Any("/auth/otp", methodNotAllowed("POST"))
	r.Any("/auth/verify", methodNotAllowed("POST"))
	r.Any("/auth/session", methodNotAllowed("POST, DELETE"))
	r.Any("/auth/whoami", methodNotAllowed("GET"))
}

// requireSameOrigin refuses a browser request from another origin (checkOrigin)
// with a 403.
func requireSameOrigin() *hook.Handler[*core.RequestEvent] {
	return middleware("sitedropSameOrigin", func(e *core.RequestEvent) error {
		if err := checkOrigin(e); err != nil {
			return err
		}
		return e.Next()
	})
}

// perClient counts the request against l for its client (RateKey) and
// refuses it over the limit with a 429.
func (a *signInDesk) perClient(l *ratelimit.Limiter) *hook.Handler[*core.RequestEvent] {
	return middleware("sitedropAuthRateLimit", func(e *core.RequestEvent) error {
		if err := apierr.RateRefusal(e.Response, l.Check(a.proxies.RateKey(e.Request))); err != nil {
			return err
		}
		return e.Next()
	})
}

// authWhoami is GET /auth/whoami with an API key: the key's user, as
// POST /auth/verify gives it, and nothing else (no session, no cookie).
func (a *signInDesk) authWhoami(e *core.RequestEvent) error {
	return e.JSON(http.StatusOK, map[string]any{"user": userJSON(userOf(e))})
}

// authOTP is POST /auth/otp {email}: it mails a code and answers
// {"otp_id"}. Known and unknown addresses get the same answer after the
// same work; with sign-up closed an unknown address is mailed that it has
// no account, and its id is made up.
func (a *signInDesk) authOTP(e *core.RequestEvent) error {
	var body struct {
		Email string `json:"email"`
	}
	if err := a.guards.ReadJSON(e.Response, e.Request, authBodyLimit, &body); err != nil {
		return err
	}
	id, err := a.sendCode(e, body.Email)
	if err != nil {
		return err
	}
	return e.JSON(http.StatusOK, map[string]string{"otp_id": id})
}

// sendCode mails a sign-in code to the address raw (after the per-client
// rate limit, which the caller checks) and returns the code's id (see
// accounts.SignIn.SendCode). Codes per address are limited too, so that
// many client addresses together cannot guess at one account (each new
// code also ends the earlier ones); a code that could not be mailed is
// given back.
func (a *signInDesk) sendCode(e *core.RequestEvent, raw string) (string, error) {
	email, err := accounts.ParseEmail(raw)
	if err != nil {
		return "", err
	}
	if err := apierr.RateRefusal(e.Response, a.limits.otpPerAddress.Check(email)); err != nil {
		return "", err
	}
	id, err := a.signIn(e).SendCode(email)
	var me *accounts.MailError
	if errors.As(err, &me) {
		if me.Uncounted {
			a.limits.otpPerAddress.Refund(email, 1)
		}
		return "", a.mailFailed(e.App, me.Err)
	}
	return id, err
}

// signIn is the sign-in service as e's app and the configuration have it
// now (sign-up may be opened and closed while serving).
func (a *signInDesk) signIn(e *core.RequestEvent) *accounts.SignIn {
	return &accounts.SignIn{App: e.App, Signup: a.cfg.Signup,
		MailCode:      func(to, code string) error { return a.sendLoginCode(e.App, to, code) },
		MailNoAccount: func(to string) error { return a.sendNoAccount(e.App, to) },
		CheckSignup:   a.blocks.CheckSignup,
		Acting:        signInActing,
	}
}

// authVerify is POST /auth/verify {otp_id, code}: a right code signs in
// (creating the account on first use when sign-up is open), returns a new
// API key and sets the session cookie.
func (a *signInDesk) authVerify(e *core.RequestEvent) error {
	var body struct {
		OTPID string `json:"otp_id"`
		Code  string `json:"code"`
	}
	if err := a.guards.ReadJSON(e.Response, e.Request, authBodyLimit, &body); err != nil {
		return err
	}
	plain, user, err := a.verifyCode(e, body.OTPID, body.Code)
	if err != nil {
		return err
	}
	return e.JSON(http.StatusOK, map[string]any{"api_key": plain, "user": userJSON(user)})
}

// verifyCode signs in with a code (after the per-client rate limit, which
// the caller checks; see accounts.SignIn.Verify) and starts the browser's
// session on the new key. It returns the key and its user.
func (a *signInDesk) verifyCode(e *core.RequestEvent, otpID, code string) (string, *core.Record, error) {
	plain, key, user, err := a.signIn(e).Verify(e.Request.Context(), otpID, code)
	if err != nil {
		return "", nil, err
	}
	if err := a.sessions.Start(e.Response, e.Request, key, true); err != nil {
		return "", nil, err
	}
	return plain, user, nil
}

// authSessionCreate is POST /auth/session with an API key: it gives the
// browser a session cookie for the web pages.
func (a *signInDesk) authSessionCreate(e *core.RequestEvent) error {
	tok, _ := bearerToken(e.Request)
	key, user, err := accounts.APIKeyByPlain(e.App, tok)
	var be *accounts.BannedError
	if errors.As(err, &be) {
		return bannedAPIError(be)
	}
	if err != nil {
		return apierr.Fail(http.StatusUnauthorized, msgUnauthorized)
	}
	// the session lasts as long as the key does
	if err := a.sessions.Start(e.Response, e.Request, key, false); err != nil {
		return err
	}
	return e.JSON(http.StatusOK, map[string]any{"user": userJSON(user)})
}

// authSessionDelete is DELETE /auth/session: sign out.
func (a *signInDesk) authSessionDelete(e *core.RequestEvent) error {
	if err := a.sessions.SignOut(e); err != nil {
		return err
	}
	return e.JSON(http.StatusOK, map[string]string{"message": "Signed out"})
}

// forPages is the sign-in endpoints' work that the sign-in page's forms
// share (pages.SignIn): the same limits, the same steps.
func (a *signInDesk) forPages() pages.SignIn {
	limit := func(l *ratelimit.Limiter) func(*core.RequestEvent) error {
		return func(e *core.RequestEvent) error {
			return apierr.RateRefusal(e.Response, l.Check(a.proxies.RateKey(e.Request)))
		}
	}
	return pages.SignIn{
		PageLimit:   limit(a.limits.login),
		CodeLimit:   limit(a.limits.otp),
		VerifyLimit: limit(a.limits.verify),
		SendCode:    a.sendCode,
		Verify: func(e *core.RequestEvent, otpID, code string) error {
			_, _, err := a.verifyCode(e, otpID, code)
			return err
		},
		Signup: func() bool { return a.cfg.Signup },
	}
}

// signInActing names the account that signs in as the actor of ctx, from
// the address its request's actor has (audit.WithActor): the request is
// anonymous until the code is checked, but the key it makes is the
// account's doing.
func signInActing(ctx context.Context, user *core.Record) context.Context {
	return audit.WithActor(ctx, func() audit.Actor {
		a, _ := audit.ActorOf(ctx)
		return audit.User(user.Id, a.IP)
	})
}
