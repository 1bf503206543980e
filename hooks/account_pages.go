package hooks

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
	"sitedrop/sites/accounts"
	"sitedrop/sites/domains"
	"sitedrop/sites/intake"
	"sitedrop/ui"
)

// accountPages are the signed-in user's account page, its API key forms
// and its browser session forms.
type accountPages struct {
	cfg      *Config
	deploys  *sites.Service
	domains  *domains.Service
	kit      *pageKit
	sessions *sessions
}

// maxKeyNameLen bounds an API key's name (characters).
const maxKeyNameLen = 100

// accountPage is GET /account: the signed-in user's sites (with slots used
// of the plan), API keys, signed-in browsers and sign-out.
func (a *accountPages) accountPage(e *core.RequestEvent) error {
	user := a.sessions.user(e)
	if user == nil {
		return e.Redirect(http.StatusSeeOther, loginURL("/account"))
	}
	return a.renderAccount(e, user)
}

// accountKeyCreate is the "create key" form. It answers 303 to the account
// page, which shows the new key once (a flash), so a reload makes no
// second key.
func (a *accountPages) accountKeyCreate(e *core.RequestEvent) error {
	user, err := a.kit.formUser(e)
	if user == nil {
		return err
	}
	name := strings.TrimSpace(e.Request.PostForm.Get("name"))
	if utf8.RuneCountInString(name) > maxKeyNameLen {
		a.sessions.flash(e, ui.FlashError, fmt.Sprintf("No key was created: a key name has at most %d characters.", maxKeyNameLen))
		return e.Redirect(http.StatusSeeOther, "/account")
	}
	if name == "" {
		name = "Key"
	}
	plain, _, err := accounts.CreateAPIKey(e.App, user, name)
	if err != nil {
		return err
	}
	a.sessions.flashWith(e, ui.Flash{
		Kind:   ui.FlashSuccess,
		Text:   fmt.Sprintf("New key %s created. Copy it now: it is shown once.", name),
		Secret: plain,
	})
	return e.Redirect(http.StatusSeeOther, "/account")
}

// accountKeyRevoke is a key's "revoke" button. Revoking the key this
// browser's session stands on ends the session too.
func (a *accountPages) accountKeyRevoke(e *core.RequestEvent) error {
	user, err := a.kit.formUser(e)
	if user == nil {
		return err
	}
	key, err := accounts.FindAPIKeyOf(e.App, user.Id, e.Request.PathValue("id"))
	if err != nil {
		return a.sessions.errorPage(e, http.StatusNotFound, "Key not found", "There is no such key on your account.")
	}
	label := ui.KeyLabel(ui.AccountKey{Prefix: key.Prefix(), Name: key.Name()})
	// queued first: it would be lost with the session if the key was its
	a.sessions.flash(e, ui.FlashSuccess, "Key "+label+" revoked. Requests with it are refused from now on.")
	if err := accounts.DeleteAPIKey(e.App, key); err != nil {
		return fmt.Errorf("revoke key: %w", err)
	}
	return e.Redirect(http.StatusSeeOther, "/account")
}

// pageKit is what the page handlers share: the browser session service
// and the guards that read form bodies.
type pageKit struct {
	sessions *sessions
	guards   *intake.Guards
}

// readForm checks a page's form post: same origin, a readable small form
// (in PostForm), read as deploy bodies are (intake.Guards.Body: the minimum rate
// after the grace, each byte held of the small bodies' pool as it comes,
// until it is parsed; see intake.Guards.BodyLease). When ok is false the answer has been decided: an error
// page, or the error of writing it.
func (k *pageKit) readForm(e *core.RequestEvent) (ok bool, err error) {
	if err := checkOrigin(e); err != nil {
		return false, k.sessions.errorPage(e, http.StatusForbidden, "Request refused", "This form can only be sent from this server's own pages.")
	}
	lease := k.guards.BodyLease(e.Request.Context(), formBodyLimit)
	defer lease.End()
	body, err := k.guards.Body(e.Response, e.Request, formBodyLimit, lease)
	if err == nil {
		e.Request.Body = readCloser{body, e.Request.Body}
		err = e.Request.ParseForm()
	}
	var ae *apiError
	if intake.BodyRefusal(err) {
		ae, _ = toAPIError(err)
	}
	switch {
	case ae != nil: // too large, too slow, the memory budget
		// A read past its deadline cancels the request's context, which
		// would stop the page's rendering: the client still reads it.
		e.Request = e.Request.WithContext(context.WithoutCancel(e.Request.Context()))
		setRetryAfter(e, ae)
		return false, k.sessions.errorPage(e, ae.Status, http.StatusText(ae.Status), ae.Message)
	case err != nil:
		return false, k.sessions.errorPage(e, http.StatusBadRequest, "Bad request", "The form could not be read.")
	}
	return true, nil
}

// readCloser is a body read through another reader (a guarded body) and
// closed as it was.
type readCloser struct {
	io.Reader
	io.Closer
}

// formUser checks a cookie-authenticated form post: same origin, a
// readable small form, a signed-in user. When it returns a nil user the
// answer has been decided (the returned error, possibly nil after a
// redirect or an error page).
func (k *pageKit) formUser(e *core.RequestEvent) (*core.Record, error) {
	if ok, err := k.readForm(e); !ok {
		return nil, err
	}
	user := k.sessions.user(e)
	if user == nil {
		return nil, e.Redirect(http.StatusSeeOther, loginURL("/account"))
	}
	return user, nil
}

// renderAccount renders the account page of user.
func (a *accountPages) renderAccount(e *core.RequestEvent, user *core.Record) error {
	deps, err := a.deploys.ListOwned(user)
	if err != nil {
		return err
	}
	domainsUsed, err := domains.CountOwned(e.App, user.Id)
	if err != nil {
		return err
	}
	now := time.Now()
	plan := accounts.UserOf(user).Plan()
	p := ui.AccountProps{
		DomainsUsed: domainsUsed,
		Email:       user.Email(),
		Plan:        plan,
		SlotsUsed:   len(deps),
		SlotLimit:   a.deploys.SlotLimit(plan),
		DomainLimit: a.domains.Limit(plan),
		Drop:        dropProps(a.cfg, "Deploy a new site", user, ""),
	}
	for _, rec := range deps {
		d := sites.DeploymentOf(rec)
		slug := d.Slug()
		p.Deployments = append(p.Deployments, ui.AccountDeployment{
			ID: d.Id, Slug: slug, Title: d.Title(), URL: a.cfg.links().Site(slug),
			UpdatedAt: timestamp(d.Updated()),
			Protected: d.Protection() != nil,
		})
	}
	if p.Keys, err = accountKeys(e.App, user, now); err != nil {
		return err
	}
	if p.Sessions, err = accountSessions(e.App, user, a.sessions.token(e), now); err != nil {
		return err
	}
	return render(e, http.StatusOK, ui.Account(a.sessions.layout(e, user), p))
}

// accountKeys are user's API keys, without the keys that browser sessions
// made for themselves (those are listed as sessions).
func accountKeys(app core.App, user *core.Record, now time.Time) ([]ui.AccountKey, error) {
	keys, err := accounts.ListAPIKeys(app, user)
	if err != nil {
		return nil, err
	}
	own, err := accounts.SessionKeyIDs(app, user)
	if err != nil {
		return nil, err
	}
	var out []ui.AccountKey
	for _, rec := range keys {
		if own[rec.Id] {
			continue
		}
		k := accounts.APIKeyOf(rec)
		created := k.Created()
		ak := ui.AccountKey{
			ID: k.Id, Prefix: k.Prefix(), Name: k.Name(),
			CreatedAt: timestamp(created), CreatedAgo: ago(now, created),
		}
		if t := k.LastUsedAt(); !t.IsZero() {
			ak.LastUsed, ak.LastUsedAgo = timestamp(t), ago(now, t)
		}
		out = append(out, ak)
	}
	return out, nil
}

// ago says how long before now t was, for people: "3 hours ago".
func ago(now, t time.Time) string {
	d := now.Sub(t)
	if d < time.Minute {
		return "just now"
	}
	return timeLeft(d) + " ago"
}
