package hooks

import (
	"errors"
	"net/http"
	"net/mail"
	"time"

	"github.com/pocketbase/ozzo-validation/v4/is"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/router"
	"github.com/pocketbase/pocketbase/tools/security"

	"sitedrop/hooks/server"
	"sitedrop/sites/accounts"
)

// authBodyLimit bounds the small JSON bodies of the sign-in endpoints.
const authBodyLimit = 4 << 10

// Messages of the sign-in endpoints.
const (
	msgInvalidCode   = "Invalid or expired code"
	msgSignupClosed  = "Sign-up is closed on this server"
	msgEmailRequired = "email is required"
	msgEmailInvalid  = "email is not a valid address"
)

// signInDesk is the sign-in endpoints and page: codes mailed and verified,
// browser sessions started and ended, within the per-client limits.
type signInDesk struct {
	cfg *Config
	// limits are the per-client (and per-address) sign-in limits.
	limits *authLimits
	// proxies tell the client the limits count (RateKey).
	proxies server.TrustedProxies
	// kit is the session service and the form readers of the pages.
	kit *pageKit
}

// bindAuthAPI registers the sign-in endpoints; whoami behind auth.
func bindAuthAPI(r *router.Router[*core.RequestEvent], a *signInDesk, auth *apiAuth) {
	r.POST("/auth/otp", a.authOTP)               // mail a sign-in code
	r.POST("/auth/verify", a.authVerify)         // code → API key + session
	r.POST("/auth/session", a.authSessionCreate) // API key → session
	r.DELETE("/auth/session", a.authSessionDelete)
	r.POST("/auth/logout", a.authLogoutForm)                     // sign-out button of the pages
	r.GET("/auth/whoami", a.authWhoami).Bind(auth.requireUser()) // API key → its user
	r.GET("/auth/login", a.loginPage)                            // sign-in page: e-mail, then code
	r.POST("/auth/login", a.loginEmailForm)                      // its e-mail form without JavaScript
	r.POST("/auth/login/code", a.loginCodeForm)                  // its code form without JavaScript
	r.Any("/auth/otp", methodNotAllowed("POST"))
	r.Any("/auth/verify", methodNotAllowed("POST"))
	r.Any("/auth/session", methodNotAllowed("POST, DELETE"))
	r.Any("/auth/whoami", methodNotAllowed("GET"))
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
	if err := checkOrigin(e); err != nil {
		return err
	}
	if err := a.limits.otp.Check(a.proxies.RateKey(e.Request)); err != nil {
		return err
	}
	var body struct {
		Email *string `json:"email"`
	}
	if err := a.kit.guards.ReadJSON(e.Response, e.Request, authBodyLimit, &body); err != nil {
		return err
	}
	if body.Email == nil {
		return fail(http.StatusBadRequest, msgEmailRequired)
	}
	id, err := a.sendCode(e, *body.Email)
	if err != nil {
		return err
	}
	return e.JSON(http.StatusOK, map[string]string{"otp_id": id})
}

// sendCode mails a sign-in code to the address raw (after the per-client
// rate limit, which the caller checks) and returns the code's id. Known
// and unknown addresses get the same answer after the same work; with
// sign-up closed an unknown address is mailed that it has no account, and
// its id is made up. Client errors are *apiError.
func (a *signInDesk) sendCode(e *core.RequestEvent, raw string) (string, error) {
	if raw == "" {
		return "", fail(http.StatusBadRequest, msgEmailRequired)
	}
	email, ok := parseEmail(raw)
	if !ok {
		return "", fail(http.StatusBadRequest, msgEmailInvalid)
	}
	// Codes per address are limited too, so that many client addresses
	// together cannot guess at one account (each new code also ends the
	// earlier ones).
	if err := rateRefusal(e.Response, a.limits.otpPerAddress.Check(email)); err != nil {
		return "", err
	}
	_, err := accounts.FindUserByEmail(e.App, email)
	known := err == nil
	if !known && !a.cfg.Signup {
		accounts.DummyLoginCodeWork()
		if err := a.sendNoAccount(e.App, email); err != nil {
			a.limits.otpPerAddress.Refund(email, 1)
			return "", a.mailFailed(e.App, err)
		}
		return security.RandomStringWithAlphabet(15, idAlphabet), nil
	}
	id, code, err := accounts.NewLoginCode(e.App, email)
	if err != nil {
		return "", err
	}
	if err := a.sendLoginCode(e.App, email, code); err != nil {
		// no code was sent: none stays valid, and none is counted
		if accounts.DeleteLoginCode(e.App, id) == nil {
			a.limits.otpPerAddress.Refund(email, 1)
		}
		return "", a.mailFailed(e.App, err)
	}
	return id, nil
}

// authVerify is POST /auth/verify {otp_id, code}: a right code signs in
// (creating the account on first use when sign-up is open), returns a new
// API key and sets the session cookie.
func (a *signInDesk) authVerify(e *core.RequestEvent) error {
	// A cross-site form could otherwise sign a visitor in as the attacker.
	if err := checkOrigin(e); err != nil {
		return err
	}
	if err := a.limits.verify.Check(a.proxies.RateKey(e.Request)); err != nil {
		return err
	}
	var body struct {
		OTPID *string `json:"otp_id"`
		Code  *string `json:"code"`
	}
	if err := a.kit.guards.ReadJSON(e.Response, e.Request, authBodyLimit, &body); err != nil {
		return err
	}
	if body.OTPID == nil || *body.OTPID == "" {
		return fail(http.StatusBadRequest, "otp_id is required")
	}
	if body.Code == nil || *body.Code == "" {
		return fail(http.StatusBadRequest, "code is required")
	}
	plain, user, err := a.verifyCode(e, *body.OTPID, *body.Code)
	if err != nil {
		return err
	}
	return e.JSON(http.StatusOK, map[string]any{"api_key": plain, "user": userJSON(user)})
}

// verifyCode signs in with a code (after the per-client rate limit, which
// the caller checks): it creates the account on first use when sign-up is
// open, makes an API key for the new browser session and sets its cookie.
// It returns the key and its user. Client errors are *apiError.
func (a *signInDesk) verifyCode(e *core.RequestEvent, otpID, code string) (string, *core.Record, error) {
	email, err := accounts.VerifyLoginCode(e.App, otpID, code)
	if errors.Is(err, accounts.ErrInvalidCode) {
		return "", nil, fail(http.StatusBadRequest, msgInvalidCode)
	}
	if err != nil {
		return "", nil, err
	}
	user, err := accounts.FindUserByEmail(e.App, email)
	if err != nil {
		if !a.cfg.Signup {
			return "", nil, fail(http.StatusForbidden, msgSignupClosed)
		}
		if user, _, err = upsertUser(e.App, email, ""); err != nil {
			// a concurrent first sign-in of the same address created it
			if user, err = accounts.FindUserByEmail(e.App, email); err != nil {
				return "", nil, err
			}
		}
	}
	plain, key, err := accounts.CreateAPIKey(e.App, user, "Web sign-in "+time.Now().UTC().Format("2006-01-02 15:04"))
	if err != nil {
		return "", nil, err
	}
	if err := a.kit.sessions.start(e, key, true); err != nil {
		return "", nil, err
	}
	return plain, user, nil
}

// authSessionCreate is POST /auth/session with an API key: it gives the
// browser a session cookie for the web pages.
func (a *signInDesk) authSessionCreate(e *core.RequestEvent) error {
	if err := checkOrigin(e); err != nil {
		return err
	}
	if err := a.limits.session.Check(a.proxies.RateKey(e.Request)); err != nil {
		return err
	}
	tok, _ := bearerToken(e.Request)
	key, user, err := accounts.APIKeyByPlain(e.App, tok)
	if err != nil {
		return fail(http.StatusUnauthorized, msgUnauthorized)
	}
	// the session lasts as long as the key does
	if err := a.kit.sessions.start(e, key, false); err != nil {
		return err
	}
	return e.JSON(http.StatusOK, map[string]any{"user": userJSON(user)})
}

// authSessionDelete is DELETE /auth/session: sign out.
func (a *signInDesk) authSessionDelete(e *core.RequestEvent) error {
	if err := checkOrigin(e); err != nil {
		return err
	}
	if err := a.kit.sessions.end(e); err != nil {
		return err
	}
	return e.JSON(http.StatusOK, map[string]string{"message": "Signed out"})
}

// authLogoutForm is the pages' sign-out form: sign out, back to the start.
func (a *signInDesk) authLogoutForm(e *core.RequestEvent) error {
	if err := checkOrigin(e); err != nil {
		return a.kit.sessions.errorPage(e, http.StatusForbidden, "Request refused", "This form can only be sent from this server's own pages.")
	}
	if err := a.kit.sessions.end(e); err != nil {
		return err
	}
	return e.Redirect(http.StatusSeeOther, "/")
}

// idAlphabet is the alphabet of PocketBase record ids.
const idAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

// parseEmail accepts a bare address (no display name) of at most 254
// characters that PocketBase's email fields also accept, and returns it
// lowercased.
func parseEmail(s string) (string, bool) {
	s = normalizeEmail(s)
	if len(s) > 254 {
		return "", false
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s || a.Name != "" || is.EmailFormat.Validate(s) != nil {
		return "", false
	}
	return s, true
}
