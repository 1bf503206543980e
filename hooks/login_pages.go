package hooks

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/pocketbase/pocketbase/core"

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

// loginPage is GET /auth/login?next=[&otp=]: the e-mail step, or the code
// step of the code otp. Over its rate limit a browser (Accept: text/html)
// gets an error page, other clients the JSON error.
func (a *signInDesk) loginPage(e *core.RequestEvent) error {
	if err := rateRefusal(e.Response, a.limits.login.Check(a.proxies.RateKey(e.Request))); err != nil {
		if !wantsHTML(e.Request) {
			return err
		}
		return a.sessions.errorPage(e, http.StatusTooManyRequests, msgRateLimited, "Too many requests from your address. Wait a minute and try again.")
	}
	q := e.Request.URL.Query()
	p := a.loginProps(q.Get("next"))
	user := a.sessions.user(e)
	p.SignedOut = q.Has("signed_out") && user == nil
	if otp := q.Get("otp"); accounts.ValidCodeID(otp) {
		p.OTPID = otp
		if err, ok := loginErrors[q.Get("error")]; ok {
			if ae, known := toAPIError(err); known {
				p.Error = ae.Message
			}
		}
	}
	return render(e, http.StatusOK, ui.Login(a.sessions.layout(e, user), p))
}

// signedOutPage is where signing this browser out leads: the sign-in page,
// saying it is signed out (no session is left to carry a flash).
const signedOutPage = "/auth/login?signed_out=1"

// loginEmailForm is POST /auth/login (email, next): it mails a code and
// sends the browser to the code step.
func (a *signInDesk) loginEmailForm(e *core.RequestEvent) error {
	p := a.loginProps(e.Request.PostForm.Get("next"))
	p.Email = strings.TrimSpace(e.Request.PostForm.Get("email"))
	if err := rateRefusal(e.Response, a.limits.otp.Check(a.proxies.RateKey(e.Request))); err != nil {
		return a.loginRefused(e, p, err)
	}
	id, err := a.sendCode(e, p.Email)
	if err != nil {
		return a.loginRefused(e, p, err)
	}
	return e.Redirect(http.StatusSeeOther, "/auth/login?otp="+url.QueryEscape(id)+"&next="+url.QueryEscape(p.Next))
}

// loginCodeForm is POST /auth/login/code (otp_id, code, next): a right code
// signs the browser in and sends it on to next.
func (a *signInDesk) loginCodeForm(e *core.RequestEvent) error {
	f := e.Request.PostForm
	p := a.loginProps(f.Get("next"))
	if !accounts.ValidCodeID(f.Get("otp_id")) {
		return a.loginRefused(e, p, accounts.ErrCodeIDRequired)
	}
	p.OTPID = f.Get("otp_id")
	if err := rateRefusal(e.Response, a.limits.verify.Check(a.proxies.RateKey(e.Request))); err != nil {
		return a.loginRefused(e, p, err)
	}
	code := strings.Join(strings.Fields(f.Get("code")), "")
	if _, _, err := a.verifyCode(e, p.OTPID, code); err != nil {
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
func (a *signInDesk) loginProps(next string) ui.LoginProps {
	return ui.LoginProps{Next: safeNext(next), SignupOpen: a.cfg.Signup}
}

// loginRefused shows the sign-in form of p again with why err refused the
// post, with err's status; an error that is not the client's stays one
// (a 500).
func (a *signInDesk) loginRefused(e *core.RequestEvent, p ui.LoginProps, err error) error {
	ae, known := toAPIError(err)
	if !known {
		return err
	}
	p.Error = ae.Message
	return render(e, ae.Status, ui.Login(a.sessions.layout(e, a.sessions.user(e)), p))
}
