package pages

import (
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites/accounts"
	"sitedrop/ui"
)

// accountSessions are user's signed-in browsers, the one of token ("this
// browser") first, then newest first, each named by its User-Agent.
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
			Client:     sess.Client().String(),
			CreatedAt:  timestamp(created),
			CreatedAgo: ui.Ago(now, created),
			ExpiresAt:  timestamp(expires),
			ExpiresIn:  "in " + ui.TimeLeft(expires.Sub(now)),
			ByCode:     sess.OwnsKey(),
		}
		if !s.ByCode {
			if k, err := accounts.FindAPIKey(app, sess.APIKeyID()); err == nil {
				s.KeyPrefix = k.Prefix()
			}
		}
		out = append(out, s)
	}
	// stable: the rest keep the newest-first order of ListSessions
	slices.SortStableFunc(out, func(a, b ui.AccountSession) int {
		switch {
		case a.Current == b.Current:
			return 0
		case a.Current:
			return -1
		}
		return 1
	})
	return out, nil
}

// userSession is the session {id} of the path when it belongs to the
// signed-in user.
func userSession(e *core.RequestEvent) (*core.Record, bool) {
	s, err := accounts.FindLiveSessionOf(e.App, userOf(e).Id, e.Request.PathValue("id"), time.Now())
	if err != nil {
		return nil, false
	}
	return s.Record, true
}

// sessionRevoke is a session's "Sign out" button: it ends that browser's
// session (and the key made for it), with a message saying which browser.
// This browser's row signs out through /auth/logout; its own session
// posted here signs it out the same way, to the sign-in page.
func (a *accountPages) sessionRevoke(e *core.RequestEvent) error {
	rec, ok := userSession(e)
	if !ok {
		return a.sessions.back(e, "/account", ui.FlashError, "That browser session had already ended.")
	}
	if a.sessions.IsCurrent(e.Request, rec) {
		if err := a.sessions.SignOut(e); err != nil {
			return err
		}
		return e.Redirect(http.StatusSeeOther, signedOutPage)
	}
	if err := accounts.EndSession(e.Request.Context(), e.App, rec); err != nil {
		return err
	}
	client := accounts.SessionOf(rec).Client().String()
	return a.sessions.back(e, "/account", ui.FlashSuccess, "Signed out "+client+": that browser has to sign in again.")
}

// sessionRevokeOthers is "Sign out everywhere else": every session of the
// user but this browser's ends.
func (a *accountPages) sessionRevokeOthers(e *core.RequestEvent) error {
	n, err := a.sessions.EndOthers(e.Request, userOf(e))
	if err != nil {
		return err
	}
	msg := fmt.Sprintf("Signed out %d other browsers.", n)
	switch n {
	case 0:
		msg = "No other browser was signed in."
	case 1:
		msg = "Signed out 1 other browser."
	}
	return a.sessions.back(e, "/account", ui.FlashSuccess, msg)
}
