package pages

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
	"sitedrop/sites/accounts"
	"sitedrop/sites/domains"
	"sitedrop/sites/usage"
	"sitedrop/ui"
)

// accountPages are the signed-in user's account page, its API key forms
// and its browser session forms.
type accountPages struct {
	limits   Limits
	links    sites.Links // the addresses given out, built at serve time
	deploys  *sites.Service
	domains  *domains.Service
	sessions *Sessions
	usage    *usage.Service // nil: no Usage panel
}

// MaxKeyNameLen bounds an API key's name (characters).
const MaxKeyNameLen = 100

// accountKeyCreate is the "create key" form. It answers 303 to the account
// page, which shows the new key once (a flash), so a reload makes no
// second key.
func (a *accountPages) accountKeyCreate(e *core.RequestEvent) error {
	user := userOf(e)
	name := strings.TrimSpace(e.Request.PostForm.Get("name"))
	if utf8.RuneCountInString(name) > MaxKeyNameLen {
		return a.sessions.back(e, "/account", ui.FlashError, fmt.Sprintf("No key was created: a key name has at most %d characters.", MaxKeyNameLen))
	}
	if name == "" {
		name = "Key"
	}
	plain, _, err := accounts.CreateAPIKey(e.Request.Context(), e.App, user, name)
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

// accountKeyRevokeConfirm is GET /account/keys/{id}/revoke: the question
// asked before a key is revoked, as a page with the POST form, so it
// works without JavaScript.
func (a *accountPages) accountKeyRevokeConfirm(e *core.RequestEvent) error {
	user := userOf(e)
	key, err := accounts.FindAPIKeyOf(e.App, user.Id, e.Request.PathValue("id"))
	if err != nil {
		return a.sessions.errorPage(e, http.StatusNotFound, "Key not found", "There is no such key on your account.")
	}
	ss, err := accounts.ListSessions(e.App, user)
	if err != nil {
		return err
	}
	onIt, tok := false, a.sessions.Token(e.Request)
	for _, s := range ss {
		onIt = onIt || (accounts.IsSessionOf(s, tok) && accounts.SessionOf(s).APIKeyID() == key.Id)
	}
	return Render(e, http.StatusOK, ui.KeyRevoke(a.sessions.layout(e, user), ui.KeyRevokeProps{
		Key:     ui.AccountKey{ID: key.Id, Prefix: key.Prefix(), Name: key.Name()},
		Session: onIt,
	}))
}

// accountKeyRevoke is the confirmation page's "revoke" button: without
// confirm=yes (a form from elsewhere, an old page) it only goes to the
// question. Revoking the key this browser's session stands on ends the
// session too.
func (a *accountPages) accountKeyRevoke(e *core.RequestEvent) error {
	key, err := accounts.FindAPIKeyOf(e.App, userOf(e).Id, e.Request.PathValue("id"))
	if err != nil {
		return a.sessions.back(e, "/account", ui.FlashError, "That key was already revoked.")
	}
	if e.Request.PostForm.Get("confirm") != "yes" {
		return e.Redirect(http.StatusSeeOther, "/account/keys/"+key.Id+"/revoke")
	}
	label := ui.KeyLabel(ui.AccountKey{Prefix: key.Prefix(), Name: key.Name()})
	// queued first: it would be lost with the session if the key was its
	a.sessions.flash(e, ui.Flash{Kind: ui.FlashSuccess, Text: "Key " + label + " revoked. Requests with it are refused from now on."})
	if err := accounts.DeleteAPIKey(e.Request.Context(), e.App, key); err != nil {
		return fmt.Errorf("revoke key: %w", err)
	}
	return e.Redirect(http.StatusSeeOther, "/account")
}

// accountPage is GET /account: the signed-in user's sites (with slots used
// of the plan), API keys, signed-in browsers and sign-out. The site list
// takes a search (q: in slugs and titles) and an order (sort: see
// sites.SortOrders) as query parameters; a search too long is a 400 page.
func (a *accountPages) accountPage(e *core.RequestEvent) error {
	user := userOf(e)
	query := e.Request.URL.Query()
	q := sites.OwnedQuery{Search: strings.TrimSpace(query.Get("q")), Sort: query.Get("sort")}
	if !slices.Contains(sites.SortOrders, q.Sort) {
		q.Sort = sites.SortOrders[0]
	}
	list, err := a.deploys.ListOwnedSites(user.Id, q)
	if errors.Is(err, sites.ErrSearchTooLong) {
		return a.sessions.errorPage(e, http.StatusBadRequest, "Search too long",
			fmt.Sprintf("A search has at most %d characters.", sites.MaxSearchLen))
	}
	if err != nil {
		return err
	}
	total, err := a.deploys.CountOwned(user.Id)
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
		SlotsUsed:   total,
		SlotLimit:   a.deploys.SlotLimit(plan),
		DomainLimit: a.domains.Limit(plan),
		Drop:        dropProps(a.limits, "Deploy a new site", user, ""),
		Find:        siteFind(q, total, query.Has("sort")),
	}
	for _, site := range list {
		d := site.Deployment
		slug := d.Slug()
		row := ui.AccountDeployment{
			ID: d.Id, Slug: slug, Title: d.Title(), URL: a.links.Site(slug),
			Protected: d.Protection() != nil,
		}
		row.State, row.StateText = siteListState(d, now)
		row.DeployedAt, row.DeployedAgo = deployedAge(site.DeployedAt, now)
		p.Deployments = append(p.Deployments, row)
	}
	if a.usage != nil {
		u, err := a.usage.Usage(user, now)
		if err != nil {
			return err
		}
		p.Usage = usagePanel(u)
	}
	if p.Keys, err = accountKeys(e.App, user, now); err != nil {
		return err
	}
	if p.Sessions, err = accountSessions(e.App, user, a.sessions.Token(e.Request), now); err != nil {
		return err
	}
	return Render(e, http.StatusOK, ui.Account(a.sessions.layout(e, user), p))
}

// findAbove is how many sites an account has before its list gets a
// search box and an order.
const findAbove = 10

// siteFind is the site list's search form: shown past findAbove sites,
// or once a search or an order was chosen (so a list never looks cut
// without saying why).
func siteFind(q sites.OwnedQuery, total int, sortChosen bool) ui.SiteFind {
	labels := map[string]string{
		sites.SortDeployed: "Last deploy",
		sites.SortName:     "Name",
		sites.SortCreated:  "Newest site",
	}
	f := ui.SiteFind{
		Show:      total > findAbove || q.Search != "" || sortChosen,
		Search:    q.Search,
		MaxSearch: sites.MaxSearchLen,
		Total:     total,
	}
	for _, s := range sites.SortOrders {
		f.Sorts = append(f.Sorts, ui.SortOption{Value: s, Label: labels[s], Selected: s == q.Sort})
	}
	return f
}

// siteListState is the one place that decides a site's state in the account's
// list, and its badge's text: taken down by an admin first (it answers
// the takedown page whatever else holds), then disabled by an admin (it
// answers "not found" whatever else holds), then expiring (an anonymous site), then
// live, or nothing deployed. After disabled comes paused: a paused site
// is neither live nor expiring.
func siteListState(d *sites.Deployment, now time.Time) (ui.SiteState, string) {
	switch {
	case d.TakenDown():
		return ui.SiteTakenDown, "Taken down by an admin"
	case d.Status() != sites.StatusActive:
		return ui.SiteDisabled, "Disabled by an admin"
	case d.Paused():
		return ui.SitePaused, "Paused"
	case !d.ExpiresAt().IsZero():
		if d.Expired(now) {
			return ui.SiteExpiring, "Expired"
		}
		return ui.SiteExpiring, "Expiring in " + ui.TimeLeft(d.ExpiresAt().Sub(now))
	case d.LiveVersion() == "":
		return ui.SiteNotDeployed, "Not deployed"
	}
	return ui.SiteLive, "Live"
}

// deployedAge is when a site's live version was deployed, as a timestamp
// and for people ("3 hours ago"); both "" when none is live.
func deployedAge(at, now time.Time) (stamp, ago string) {
	if at.IsZero() {
		return "", ""
	}
	return timestamp(at), ui.Ago(now, at)
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

// accountDeletedQuery is the home page's query after an account was
// deleted: the page then says so (see farewell).
const accountDeletedQuery = "account=deleted"

// accountDeletePage is GET /account/delete: what goes with the account,
// and the form where the user types their address to confirm.
func (a *accountPages) accountDeletePage(e *core.RequestEvent) error {
	user := userOf(e)
	p := ui.AccountDeleteProps{Email: user.Email()}
	var err error
	if p.Sites, err = a.deploys.CountOwned(user.Id); err != nil {
		return err
	}
	if p.Domains, err = domains.CountOwned(e.App, user.Id); err != nil {
		return err
	}
	keys, err := accounts.ListOwnAPIKeys(e.App, user)
	if err != nil {
		return err
	}
	ss, err := accounts.ListSessions(e.App, user)
	if err != nil {
		return err
	}
	p.Keys, p.Sessions = len(keys), len(ss)
	return Render(e, http.StatusOK, ui.AccountDelete(a.sessions.layout(e, user), p))
}

// accountDelete is the confirmation's "delete" button: when the typed
// address is the account's, the account and everything in it is deleted
// (accounts.DeleteUser; the record hooks take the rest), this browser is
// signed out and sent to the home page, which says so. A wrong address
// deletes nothing and goes back to the question with a message.
func (a *accountPages) accountDelete(e *core.RequestEvent) error {
	user := userOf(e)
	if !accounts.ConfirmsDeletion(e.Request.PostForm.Get("email"), user.Email()) {
		return a.sessions.back(e, "/account/delete", ui.FlashError, "The address you typed is not this account's: nothing was deleted.")
	}
	if err := accounts.DeleteUser(e.App, user); err != nil {
		return err
	}
	if err := a.sessions.SignOut(e); err != nil {
		return err
	}
	return e.Redirect(http.StatusSeeOther, "/?"+accountDeletedQuery)
}

// farewell adds to a signed-out page frame the message that the account
// was deleted, when the page was reached as accountDelete sends there.
func farewell(e *core.RequestEvent, lp ui.LayoutProps) ui.LayoutProps {
	if !lp.SignedIn && e.Request.URL.Query().Get("account") == "deleted" {
		lp.Flashes = append(lp.Flashes, ui.Flash{Kind: ui.FlashSuccess,
			Text: "Your account was deleted, with its sites and everything in them. Thank you for using sitedrop."})
	}
	return lp
}
