package hooks

import (
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
	"sitedrop/sites/accounts"
	"sitedrop/sites/domains"
	"sitedrop/ui"
)

// accountPages are the signed-in user's account page, its API key forms
// and its browser session forms.
type accountPages struct {
	cfg      *Config
	links    sites.Links // the addresses given out, built at serve time
	deploys  *sites.Service
	domains  *domains.Service
	sessions *sessions
}

// maxKeyNameLen bounds an API key's name (characters).
const maxKeyNameLen = 100

// accountKeyCreate is the "create key" form. It answers 303 to the account
// page, which shows the new key once (a flash), so a reload makes no
// second key.
func (a *accountPages) accountKeyCreate(e *core.RequestEvent) error {
	user := userOf(e)
	name := strings.TrimSpace(e.Request.PostForm.Get("name"))
	if utf8.RuneCountInString(name) > maxKeyNameLen {
		return a.sessions.back(e, "/account", ui.FlashError, fmt.Sprintf("No key was created: a key name has at most %d characters.", maxKeyNameLen))
	}
	if name == "" {
		name = "Key"
	}
	plain, _, err := accounts.CreateAPIKey(e.App, user, name)
	if err != nil {
		return err
	}
	a.sessions.flash(e, ui.Flash{
		Kind:   ui.FlashSuccess,
		Text:   fmt.Sprintf("New key %s created. Copy it now: it is shown once.", name),
		Secret: plain,
	})
	return e.Redirect(http.StatusSeeOther, "/account")
}

// accountKeyRevoke is a key's "revoke" button. Revoking the key this
// browser's session stands on ends the session too.
func (a *accountPages) accountKeyRevoke(e *core.RequestEvent) error {
	key, err := accounts.FindAPIKeyOf(e.App, userOf(e).Id, e.Request.PathValue("id"))
	if err != nil {
		return a.sessions.errorPage(e, http.StatusNotFound, "Key not found", "There is no such key on your account.")
	}
	label := ui.KeyLabel(ui.AccountKey{Prefix: key.Prefix(), Name: key.Name()})
	// queued first: it would be lost with the session if the key was its
	a.sessions.flash(e, ui.Flash{Kind: ui.FlashSuccess, Text: "Key " + label + " revoked. Requests with it are refused from now on."})
	if err := accounts.DeleteAPIKey(e.App, key); err != nil {
		return fmt.Errorf("revoke key: %w", err)
	}
	return e.Redirect(http.StatusSeeOther, "/account")
}

// accountPage is GET /account: the signed-in user's sites (with slots used
// of the plan), API keys, signed-in browsers and sign-out.
func (a *accountPages) accountPage(e *core.RequestEvent) error {
	user := userOf(e)
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
			ID: d.Id, Slug: slug, Title: d.Title(), URL: a.links.Site(slug),
			UpdatedAt: timestamp(d.Updated()),
			Protected: d.Protection() != nil,
		})
	}
	if p.Keys, err = accountKeys(e.App, user, now); err != nil {
		return err
	}
	if p.Sessions, err = accountSessions(e.App, user, a.sessions.Token(e.Request), now); err != nil {
		return err
	}
	return render(e, http.StatusOK, ui.Account(a.sessions.layout(e, user), p))
}

// accountKeys are user's API keys, without the keys that browser sessions
// made for themselves (those are listed as sessions).
func accountKeys(app core.App, user *core.Record, now time.Time) ([]ui.AccountKey, error) {
	keys, err := accounts.ListOwnAPIKeys(app, user)
	if err != nil {
		return nil, err
	}
	var out []ui.AccountKey
	for _, k := range keys {
		created := k.Created()
		ak := ui.AccountKey{
			ID: k.Id, Prefix: k.Prefix(), Name: k.Name(),
			CreatedAt: timestamp(created), CreatedAgo: ui.Ago(now, created),
		}
		if t := k.LastUsedAt(); !t.IsZero() {
			ak.LastUsed, ak.LastUsedAgo = timestamp(t), ui.Ago(now, t)
		}
		out = append(out, ak)
	}
	return out, nil
}
