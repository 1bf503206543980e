package hooks

import (
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites/accounts"
	"sitedrop/ui"
)

// maxKeyNameLen bounds an API key's name (characters).
const maxKeyNameLen = 100

// accountPage is GET /account: the signed-in user's sites (with slots used
// of the plan), API keys and sign-out.
func (sd *sitedrop) accountPage(e *core.RequestEvent) error {
	user := sd.sessionUser(e)
	if user == nil {
		return e.Redirect(http.StatusSeeOther, loginURL("/account"))
	}
	return sd.renderAccount(e, user, "", "")
}

// accountKeyCreate is the "create key" form: the new key is shown once.
func (sd *sitedrop) accountKeyCreate(e *core.RequestEvent) error {
	user, err := sd.formUser(e)
	if user == nil {
		return err
	}
	name := strings.TrimSpace(e.Request.PostForm.Get("name"))
	if utf8.RuneCountInString(name) > maxKeyNameLen {
		return sd.errorPage(e, http.StatusBadRequest, "Name too long", fmt.Sprintf("A key name has at most %d characters.", maxKeyNameLen))
	}
	if name == "" {
		name = "Key"
	}
	plain, _, err := accounts.CreateAPIKey(e.App, user, name)
	if err != nil {
		return err
	}
	return sd.renderAccount(e, user, plain, name)
}

// accountKeyRevoke is a key's "revoke" button.
func (sd *sitedrop) accountKeyRevoke(e *core.RequestEvent) error {
	user, err := sd.formUser(e)
	if user == nil {
		return err
	}
	key, err := e.App.FindRecordById(accounts.APIKeysCollection, e.Request.PathValue("id"))
	if err != nil || key.GetString("user") != user.Id {
		return sd.errorPage(e, http.StatusNotFound, "Key not found", "There is no such key on your account.")
	}
	if err := e.App.Delete(key); err != nil {
		return err
	}
	return e.Redirect(http.StatusSeeOther, "/account")
}

// formUser checks a cookie-authenticated form post: same origin, a
// readable small form, a signed-in user. When it returns a nil user the
// answer has been decided (the returned error, possibly nil after a
// redirect or an error page).
func (sd *sitedrop) formUser(e *core.RequestEvent) (*core.Record, error) {
	if err := checkOrigin(e); err != nil {
		return nil, sd.errorPage(e, http.StatusForbidden, "Request refused", "This form can only be sent from this server's own pages.")
	}
	e.Request.Body = http.MaxBytesReader(e.Response, e.Request.Body, formBodyLimit)
	if err := e.Request.ParseForm(); err != nil {
		return nil, sd.errorPage(e, http.StatusBadRequest, "Bad request", "The form could not be read.")
	}
	user := sd.sessionUser(e)
	if user == nil {
		return nil, e.Redirect(http.StatusSeeOther, loginURL("/account"))
	}
	return user, nil
}

func (sd *sitedrop) renderAccount(e *core.RequestEvent, user *core.Record, newKey, newKeyName string) error {
	deps, err := sd.svc.ListOwned(user)
	if err != nil {
		return err
	}
	keys, err := accounts.ListAPIKeys(e.App, user)
	if err != nil {
		return err
	}
	p := ui.AccountProps{
		Email:      user.Email(),
		Plan:       user.GetString("plan"),
		SlotsUsed:  len(deps),
		SlotLimit:  sd.svc.SlotLimit(user.GetString("plan")),
		NewKey:     newKey,
		NewKeyName: newKeyName,
		Drop:       sd.dropProps("Deploy a new site", user, ""),
	}
	for _, d := range deps {
		slug := d.GetString("slug")
		p.Deployments = append(p.Deployments, ui.AccountDeployment{
			ID: d.Id, Slug: slug, Title: d.GetString("title"), URL: sd.siteURL(slug),
			UpdatedAt: timestamp(d.GetDateTime("updated").Time()),
		})
	}
	for _, k := range keys {
		last := ""
		if t := k.GetDateTime("last_used_at"); !t.IsZero() {
			last = timestamp(t.Time())
		}
		p.Keys = append(p.Keys, ui.AccountKey{
			ID: k.Id, Prefix: k.GetString("prefix"), Name: k.GetString("name"),
			CreatedAt: timestamp(k.GetDateTime("created").Time()), LastUsed: last,
		})
	}
	return render(e, http.StatusOK, ui.Account(sd.pageLayout(e, user), p))
}
