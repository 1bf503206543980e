package pages

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/hooks/internal/apierr"
	"sitedrop/sites/accounts"
	"sitedrop/ui"
)

// The sign-in page works with forms alone; login.js takes the same forms
// over with fetch calls to /auth/otp and /auth/verify. Without JavaScript:
//
//	GET  /auth/login?next=N         the e-mail form
//	POST /auth/login                mails a code → 303 /auth/login?otp=ID&next=N
//	GET  /auth/login?otp=ID&next=N  the code form (the code's id hidden in it)
//	POST /auth/login/code           signs in, sets the cookie → 303 N
//	                                a wrong code → 303 /auth/login?otp=ID&next=N&error=code
//
// Both posts have the rate limits and messages of /auth/otp and
// /auth/verify. A wrong code counts as a try, so that refusal is POST →
// 303 → GET too (a reload must not spend another try): there is no
// session yet to carry a flash message, so the redirect names the reason
// by a fixed key (loginErrors), never by its text. Any other refused post
// changes nothing and shows the form again with the reason (and the API's
// status): re-sending it changes nothing either.

// SignIn is the sign-in endpoints' work that the sign-in page's forms
// share (hooks' signInDesk), so that a form and its endpoint meet the
// same limits and take the same steps.
type SignIn struct {
	// PageLimit, CodeLimit and VerifyLimit count e against the
	// per-client limits of the sign-in page, of mailing a code (POST
	// /auth/otp) and of trying one (POST /auth/verify): over one, the 429
	// *apierr.Error, its Retry-After set on e's response.
	PageLimit, CodeLimit, VerifyLimit func(e *core.RequestEvent) error
	// SendCode mails a sign-in code to the address raw and returns the
	// code's id.
	SendCode func(e *core.RequestEvent, raw string) (otpID string, err error)
	// Verify signs the browser in with a code (its session cookie set).
	Verify func(e *core.RequestEvent, otpID, code string) error
	// Signup tells whether a first sign-in makes an account, now (it may
	// be opened and closed while serving).
	Signup func() bool
}

// loginPages are the sign-in page, its forms and the pages' sign-out
// button.
type loginPages struct {
	signIn   SignIn
	sessions *Sessions
	// answer is the API's answer to an error (Answers.Any).
	answer func(error) (*apierr.Error, bool)
	// auth answers a sign-out form from another origin (formRefused).
	auth *pageAuth
}

// loginPage is GET /auth/login?next=[&otp=]: the e-mail step, or the code
// step of the code otp. Over its rate limit a browser (Accept: text/html)
// gets an error page, other clients the JSON error.
func (a *loginPages) loginPage(e *core.RequestEvent) error {
	if err := a.signIn.PageLimit(e); err != nil {
		if !wantsHTML(e.Request) {
			return err
		}
		return a.sessions.errorPage(e, http.StatusTooManyRequests, apierr.MsgRateLimited, "Too many requests from your address. Wait a minute and try again.")
	}
	q := e.Request.URL.Query()
	p := a.loginProps(q.Get("next"))
	user := a.sessions.user(e)
	p.SignedOut = q.Has("signed_out") && user == nil
	if otp := q.Get("otp"); accounts.ValidCodeID(otp) {
		p.OTPID = otp
		if err, ok := loginErrors[q.Get("error")]; ok {
			if ae, known := a.answer(err); known {
				p.Error = ae.Message
			}
		}
	}
	return Render(e, http.StatusOK, ui.Login(a.sessions.layout(e, user), p))
}

// signedOutPage is where signing this browser out leads: the sign-in page,
// saying it is signed out (no session is left to carry a flash).
const signedOutPage = "/auth/login?signed_out=1"

// loginEmailForm is POST /auth/login (email, next): it mails a code and
// sends the browser to the code step.
func (a *loginPages) loginEmailForm(e *core.RequestEvent) error {
	p := a.loginProps(e.Request.PostForm.Get("next"))
	p.Email = strings.TrimSpace(e.Request.PostForm.Get("email"))
	if err := a.signIn.CodeLimit(e); err != nil {
		return a.loginRefused(e, p, err)
	}
	id, err := a.signIn.SendCode(e, p.Email)
	if err != nil {
		return a.loginRefused(e, p, err)
	}
	return e.Redirect(http.StatusSeeOther, "/auth/login?otp="+url.QueryEscape(id)+"&next="+url.QueryEscape(p.Next))
}

// loginCodeForm is POST /auth/login/code (otp_id, code, next): a right code
// signs the browser in and sends it on to next.
func (a *loginPages) loginCodeForm(e *core.RequestEvent) error {
	f := e.Request.PostForm
	p := a.loginProps(f.Get("next"))
	if !accounts.ValidCodeID(f.Get("otp_id")) {
		return a.loginRefused(e, p, accounts.ErrCodeIDRequired)
	}
	p.OTPID = f.Get("otp_id")
	if err := a.signIn.VerifyLimit(e); err != nil {
		return a.loginRefused(e, p, err)
	}
	code := strings.Join(strings.Fields(f.Get("code")), "")
	if err := a.signIn.Verify(e, p.OTPID, code); err != nil {
		for key, known := range loginErrors {
			if errors.Is(err, known) {
				return e.Redirect(http.StatusSeeOther, "/auth/login?otp="+url.QueryEscape(p.OTPID)+"&next="+url.QueryEscape(p.Next)+"&error="+key)
			}
		}
		return a.loginRefused(e, p, err)
	}
	return e.Redirect(http.StatusSeeOther, p.Next)
}

// loginErrors are the refusals of the code step that answer 303 back to
// it, by the key the redirect carries (?error=).
var loginErrors = map[string]error{
	"code":    accounts.ErrInvalidCode,
	"no-code": accounts.ErrCodeRequired,
}

// loginProps is the sign-in page going on to next (sanitised).
func (a *loginPages) loginProps(next string) ui.LoginProps {
	return ui.LoginProps{Next: safeNext(next), SignupOpen: a.signIn.Signup()}
}

// loginRefused shows the sign-in form of p again with why err refused the
// post, with err's status; an error that is not the client's stays one
// (a 500).
func (a *loginPages) loginRefused(e *core.RequestEvent, p ui.LoginProps, err error) error {
	ae, known := a.answer(err)
	if !known {
		return err
	}
	p.Error = ae.Message
	return Render(e, ae.Status, ui.Login(a.sessions.layout(e, a.sessions.user(e)), p))
}

// logoutForm is the pages' sign-out form: sign out, to the sign-in page
// saying so.
func (a *loginPages) logoutForm(e *core.RequestEvent) error {
	if crossOrigin.Check(e.Request) != nil {
		return a.auth.formRefused(e, errCrossOrigin)
	}
	if err := a.sessions.SignOut(e); err != nil {
		return err
	}
	return e.Redirect(http.StatusSeeOther, signedOutPage)
}
