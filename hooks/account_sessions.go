package hooks

import (
	"fmt"
	"net/http"
	"time"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites/accounts"
	"sitedrop/ui"
)

// accountSessions are user's signed-in browsers, newest first, the one of
// token ("this browser") marked.
func accountSessions(app core.App, user *core.Record, token string, now time.Time) ([]ui.AccountSession, error) {
	recs, err := accounts.ListSessions(app, user)
	if err != nil {
		return nil, err
	}
	out := make([]ui.AccountSession, 0, len(recs))
	for _, r := range recs {
		sess := accounts.SessionOf(r)
		created, expires := sess.Created(), sess.ExpiresAt()
		s := ui.AccountSession{
			ID:         r.Id,
			Current:    accounts.IsSessionOf(r, token),
			CreatedAt:  timestamp(created),
			CreatedAgo: ago(now, created),
			ExpiresAt:  timestamp(expires),
			ExpiresIn:  "in " + timeLeft(expires.Sub(now)),
			ByCode:     sess.OwnsKey(),
		}
		if !s.ByCode {
			if k, err := accounts.FindAPIKey(app, sess.APIKeyID()); err == nil {
				s.KeyPrefix = k.Prefix()
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// userSession is the session {id} of the path when it belongs to user.
func userSession(e *core.RequestEvent, user *core.Record) (*core.Record, bool) {
	s, err := accounts.FindLiveSessionOf(e.App, user.Id, e.Request.PathValue("id"), time.Now())
	if err != nil {
		return nil, false
	}
	return s.Record, true
}

// sessionRevokeConfirm is GET /account/sessions/{id}/revoke: the question
// asked before a session ends (needed for this browser's own, which signs
// it out), as a page with the POST form, so it works without JavaScript.
func (a *accountPages) sessionRevokeConfirm(e *core.RequestEvent) error {
	user := a.sessions.user(e)
	if user == nil {
		return e.Redirect(http.StatusSeeOther, loginURL("/account"))
	}
	rec, ok := userSession(e, user)
	if !ok {
		return a.sessions.errorPage(e, http.StatusNotFound, "Session not found", "This browser session has ended, or it is not yours.")
	}
	return render(e, http.StatusOK, ui.SessionRevoke(a.sessions.layout(e, user), ui.SessionRevokeProps{
		ID:      rec.Id,
		Current: accounts.IsSessionOf(rec, a.sessions.token(e)),
	}))
}

// sessionRevoke is a session's "revoke" button: it ends that browser's
// session (and the key made for it). This browser's own session ends only
// with confirm=yes, from the confirmation page; then it is signed out and
// sent to the sign-in page.
func (a *accountPages) sessionRevoke(e *core.RequestEvent) error {
	user, err := a.kit.formUser(e)
	if user == nil {
		return err
	}
	rec, ok := userSession(e, user)
	if !ok {
		a.sessions.flash(e, ui.FlashError, "That browser session had already ended.")
		return e.Redirect(http.StatusSeeOther, "/account")
	}
	if accounts.IsSessionOf(rec, a.sessions.token(e)) {
		if e.Request.PostForm.Get("confirm") != "yes" {
			return e.Redirect(http.StatusSeeOther, "/account/sessions/"+rec.Id+"/revoke")
		}
		if err := a.sessions.end(e); err != nil {
			return err
		}
		return e.Redirect(http.StatusSeeOther, "/auth/login")
	}
	if err := accounts.EndSession(e.App, rec); err != nil {
		return err
	}
	a.sessions.flash(e, ui.FlashSuccess, "The other browser is signed out.")
	return e.Redirect(http.StatusSeeOther, "/account")
}

// sessionRevokeOthers is "Sign out everywhere else": every session of the
// user but this browser's ends.
func (a *accountPages) sessionRevokeOthers(e *core.RequestEvent) error {
	user, err := a.kit.formUser(e)
	if user == nil {
		return err
	}
	recs, err := accounts.ListSessions(e.App, user)
	if err != nil {
		return err
	}
	tok, n := a.sessions.token(e), 0
	for _, r := range recs {
		if accounts.IsSessionOf(r, tok) {
			continue
		}
		if err := accounts.EndSession(e.App, r); err != nil {
			return err
		}
		n++
	}
	switch n {
	case 0:
		a.sessions.flash(e, ui.FlashSuccess, "No other browser was signed in.")
	case 1:
		a.sessions.flash(e, ui.FlashSuccess, "Signed out 1 other browser.")
	default:
		a.sessions.flash(e, ui.FlashSuccess, fmt.Sprintf("Signed out %d other browsers.", n))
	}
	return e.Redirect(http.StatusSeeOther, "/account")
}
