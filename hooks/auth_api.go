package hooks

import (
	"errors"
	"net/http"
	"net/mail"
	"time"

	"sitedrop/sites/accounts"

	"github.com/pocketbase/ozzo-validation/v4/is"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/security"
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

// bindAuthAPI registers the sign-in endpoints.
func bindAuthAPI(sd *sitedrop, se *core.ServeEvent) {
	r := se.Router
	r.POST("/auth/otp", sd.authOTP)               // mail a sign-in code
	r.POST("/auth/verify", sd.authVerify)         // code → API key + session
	r.POST("/auth/session", sd.authSessionCreate) // API key → session
	r.DELETE("/auth/session", sd.authSessionDelete)
	r.POST("/auth/logout", sd.authLogoutForm) // sign-out button of the pages
	r.GET("/auth/whoami", sd.authWhoami)      // API key → its user
	r.GET("/auth/login", sd.loginPage)
	r.Any("/auth/otp", methodNotAllowed("POST"))
	r.Any("/auth/verify", methodNotAllowed("POST"))
	r.Any("/auth/session", methodNotAllowed("POST, DELETE"))
	r.Any("/auth/whoami", methodNotAllowed("GET"))
}

// authWhoami is GET /auth/whoami with an API key: the key's user, as
// POST /auth/verify gives it, and nothing else (no session, no cookie).
func (sd *sitedrop) authWhoami(e *core.RequestEvent) error {
	user, err := sd.requireUser(e)
	if err != nil {
		return err
	}
	return e.JSON(http.StatusOK, map[string]any{"user": userJSON(user)})
}

// authOTP is POST /auth/otp {email}: it mails a code and answers
// {"otp_id"}. Known and unknown addresses get the same answer after the
// same work; with sign-up closed an unknown address is mailed that it has
// no account, and its id is made up.
func (sd *sitedrop) authOTP(e *core.RequestEvent) error {
	if err := checkOrigin(e); err != nil {
		return err
	}
	if err := sd.limits.otp.check(e.Response, sd.rateKey(e.Request)); err != nil {
		return err
	}
	var body struct {
		Email *string `json:"email"`
	}
	if err := readJSON(e, authBodyLimit, &body); err != nil {
		return err
	}
	if body.Email == nil || *body.Email == "" {
		return fail(http.StatusBadRequest, msgEmailRequired)
	}
	email, ok := parseEmail(*body.Email)
	if !ok {
		return fail(http.StatusBadRequest, msgEmailInvalid)
	}
	// Codes per address are limited too, so that many client addresses
	// together cannot guess at one account (each new code also ends the
	// earlier ones).
	if err := sd.limits.otpPerAddress.check(e.Response, email); err != nil {
		return err
	}
	_, err := e.App.FindAuthRecordByEmail(accounts.UsersCollection, email)
	known := err == nil
	if !known && !sd.cfg.Signup {
		accounts.DummyLoginCodeWork()
		if err := sd.sendNoAccount(e.App, email); err != nil {
			sd.limits.otpPerAddress.refund(email, 1)
			return sd.mailFailed(err)
		}
		return e.JSON(http.StatusOK, map[string]string{"otp_id": security.RandomStringWithAlphabet(15, idAlphabet)})
	}
	id, code, err := accounts.NewLoginCode(e.App, email)
	if err != nil {
		return err
	}
	if err := sd.sendLoginCode(e.App, email, code); err != nil {
		// no code was sent: none stays valid, and none is counted
		if accounts.DeleteLoginCode(e.App, id) == nil {
			sd.limits.otpPerAddress.refund(email, 1)
		}
		return sd.mailFailed(err)
	}
	return e.JSON(http.StatusOK, map[string]string{"otp_id": id})
}

// authVerify is POST /auth/verify {otp_id, code}: a right code signs in
// (creating the account on first use when sign-up is open), returns a new
// API key and sets the session cookie.
func (sd *sitedrop) authVerify(e *core.RequestEvent) error {
	// A cross-site form could otherwise sign a visitor in as the attacker.
	if err := checkOrigin(e); err != nil {
		return err
	}
	if err := sd.limits.verify.check(e.Response, sd.rateKey(e.Request)); err != nil {
		return err
	}
	var body struct {
		OTPID *string `json:"otp_id"`
		Code  *string `json:"code"`
	}
	if err := readJSON(e, authBodyLimit, &body); err != nil {
		return err
	}
	if body.OTPID == nil || *body.OTPID == "" {
		return fail(http.StatusBadRequest, "otp_id is required")
	}
	if body.Code == nil || *body.Code == "" {
		return fail(http.StatusBadRequest, "code is required")
	}
	email, err := accounts.VerifyLoginCode(e.App, *body.OTPID, *body.Code)
	if errors.Is(err, accounts.ErrInvalidCode) {
		return fail(http.StatusBadRequest, msgInvalidCode)
	}
	if err != nil {
		return err
	}
	user, err := e.App.FindAuthRecordByEmail(accounts.UsersCollection, email)
	if err != nil {
		if !sd.cfg.Signup {
			return fail(http.StatusForbidden, msgSignupClosed)
		}
		if user, _, err = upsertUser(e.App, email, ""); err != nil {
			// a concurrent first sign-in of the same address created it
			if user, err = e.App.FindAuthRecordByEmail(accounts.UsersCollection, email); err != nil {
				return err
			}
		}
	}
	plain, key, err := accounts.CreateAPIKey(e.App, user, "Web sign-in "+time.Now().UTC().Format("2006-01-02 15:04"))
	if err != nil {
		return err
	}
	if err := sd.startSession(e, key, true); err != nil {
		return err
	}
	return e.JSON(http.StatusOK, map[string]any{"api_key": plain, "user": userJSON(user)})
}

// authSessionCreate is POST /auth/session with an API key: it gives the
// browser a session cookie for the web pages.
func (sd *sitedrop) authSessionCreate(e *core.RequestEvent) error {
	if err := checkOrigin(e); err != nil {
		return err
	}
	if err := sd.limits.session.check(e.Response, sd.rateKey(e.Request)); err != nil {
		return err
	}
	tok, _ := bearerToken(e.Request)
	key, user, err := accounts.APIKeyByPlain(e.App, tok)
	if err != nil {
		return fail(http.StatusUnauthorized, msgUnauthorized)
	}
	// the session lasts as long as the key does
	if err := sd.startSession(e, key, false); err != nil {
		return err
	}
	return e.JSON(http.StatusOK, map[string]any{"user": userJSON(user)})
}

// authSessionDelete is DELETE /auth/session: sign out.
func (sd *sitedrop) authSessionDelete(e *core.RequestEvent) error {
	if err := checkOrigin(e); err != nil {
		return err
	}
	if err := sd.endSession(e); err != nil {
		return err
	}
	return e.JSON(http.StatusOK, map[string]string{"message": "Signed out"})
}

// authLogoutForm is the pages' sign-out form: sign out, back to the start.
func (sd *sitedrop) authLogoutForm(e *core.RequestEvent) error {
	if err := checkOrigin(e); err != nil {
		return sd.errorPage(e, http.StatusForbidden, "Request refused", "This form can only be sent from this server's own pages.")
	}
	if err := sd.endSession(e); err != nil {
		return err
	}
	return e.Redirect(http.StatusSeeOther, "/")
}

// startSession replaces the browser's session (if any) with a new one on
// key.
func (sd *sitedrop) startSession(e *core.RequestEvent, key *core.Record, ownsKey bool) error {
	if err := accounts.DeleteSession(e.App, sd.sessionToken(e)); err != nil {
		return err
	}
	tok, err := accounts.CreateSession(e.App, key, ownsKey)
	if err != nil {
		return err
	}
	sd.setSessionCookie(e, tok)
	return nil
}

func (sd *sitedrop) endSession(e *core.RequestEvent) error {
	if err := accounts.DeleteSession(e.App, sd.sessionToken(e)); err != nil {
		return err
	}
	sd.clearSessionCookie(e)
	return nil
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
