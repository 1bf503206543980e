package hooks

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/router"

	"sitedrop/sites"
	"sitedrop/sites/forms"
	"sitedrop/ui"
)

// accountSitePageSize is how many submissions a site page shows.
const accountSitePageSize = 50

// bindAccountSitePages registers the owner's page of one site and its
// forms.
func bindAccountSitePages(r *router.Router[*core.RequestEvent], site *sitePages, settings *settingsPages, protection *protectionPages, hooks *webhookPages) {
	r.GET("/account/sites/{id}", site.accountSitePage)
	r.GET("/account/sites/{id}/submissions.csv", site.accountSiteCSV)
	r.POST("/account/sites/{id}/notifications", site.accountSiteNotifications)
	r.POST("/account/sites/{id}/rollback", site.accountSiteRollback)
	r.POST("/account/sites/{id}/settings", settings.accountSiteSettings)
	r.POST("/account/sites/{id}/protection", protection.accountSiteProtection)
	r.GET("/account/sites/{id}/delete", settings.accountSiteDeletePage)
	r.POST("/account/sites/{id}/delete", settings.accountSiteDelete)
	r.POST("/account/sites/{id}/submissions/{subId}/delete", site.accountSubmissionDelete)
	r.POST("/account/sites/{id}/webhooks", hooks.accountWebhookCreate)
	r.POST("/account/sites/{id}/webhooks/{webhookId}/test", hooks.accountWebhookTest)
	r.POST("/account/sites/{id}/webhooks/{webhookId}/deliveries/{deliveryId}/redeliver", hooks.accountWebhookRedeliver)
	r.POST("/account/sites/{id}/webhooks/{webhookId}/delete", hooks.accountSiteWebhookDelete)
}

// siteForms is what every page of one site shares: finding the signed-in
// user's site of the path and answering a form post with a flash.
type siteForms struct {
	deploys  *sites.Service
	kit      *pageKit
	sessions *sessions
}

// sitePages are the site page itself and its small forms (rollback,
// notifications, submissions).
type sitePages struct {
	*siteForms
	cfg *Config
	// analytics is the site page's analytics panel.
	analytics func(app core.App, dep string, now time.Time) (ui.SiteAnalytics, error)
	// domains renders the custom domains panel.
	domains *domainPages
}

// backToSite answers a site page's form post: the message for the next
// page, and 303 to the site page (POST → redirect → GET).
func (f *siteForms) backToSite(e *core.RequestEvent, dep *core.Record, kind, text string) error {
	f.sessions.flash(e, kind, text)
	return e.Redirect(http.StatusSeeOther, "/account/sites/"+dep.Id)
}

// pageSite returns the signed-in user's deployment {id}; for anyone else
// the answer (redirect to sign-in, or 404 page) is decided.
func (f *siteForms) pageSite(e *core.RequestEvent, user *core.Record) (*core.Record, error) {
	if user == nil {
		return nil, e.Redirect(http.StatusSeeOther, loginURL(e.Request.URL.Path))
	}
	dep, err := f.deploys.FindOwned(user, e.Request.PathValue("id"))
	if err != nil {
		return nil, f.sessions.errorPage(e, http.StatusNotFound, "Site not found", "There is no such site on your account.")
	}
	return dep, nil
}

// formSite checks a form post of a site page (see formUser) and returns
// the signed-in user's site {id}; with a nil site the answer is decided.
func (f *siteForms) formSite(e *core.RequestEvent) (*core.Record, error) {
	user, err := f.kit.formUser(e)
	if user == nil {
		return nil, err
	}
	return f.pageSite(e, user)
}

// accountSitePage is GET /account/sites/{id}?page=: the state, settings,
// submissions, e-mail notifications, versions and webhooks of one site.
func (sp *sitePages) accountSitePage(e *core.RequestEvent) error {
	user := sp.sessions.user(e)
	dep, err := sp.pageSite(e, user)
	if dep == nil {
		return err
	}
	page, _ := strconv.Atoi(e.Request.URL.Query().Get("page"))
	page = min(max(page, 1), maxPage)
	total, err := forms.CountSubmissions(e.App, dep.Id)
	if err != nil {
		return err
	}
	subs, err := forms.FindSubmissions(e.App, dep.Id, accountSitePageSize, (page-1)*accountSitePageSize)
	if err != nil {
		return err
	}
	hooks, err := forms.FindWebhooks(e.App, dep.Id)
	if err != nil {
		return err
	}
	d := sites.DeploymentOf(dep)
	slug := d.Slug()
	p := ui.AccountSiteProps{
		ID: dep.Id, Slug: slug, Title: d.Title(), URL: sp.cfg.links().Site(slug),
		Disabled: d.Status() != sites.StatusActive,
		Settings: ui.SiteSettings{
			Title: d.Title(), Description: d.Description(),
			Favicon: d.Favicon(), IsSPA: d.IsSPA(),
		},
		SubmitURL:   sp.cfg.links().Web() + "/submit/" + dep.Id,
		NotifyEmail: d.NotifyEmail(), Total: int(total), Page: page,
		Drop:          dropProps(sp.cfg, "Deploy again", user, dep.Id),
		WebhookEvents: forms.WebhookEvents,
		Protection:    siteProtection(sp.cfg, dep),
	}
	if page > 1 {
		p.PrevPage = page - 1
	}
	if int64(page*accountSitePageSize) < total {
		p.NextPage = page + 1
	}
	for _, s := range subs {
		j := s.JSON()
		p.Submissions = append(p.Submissions, ui.AccountSubmission{ID: j.ID, CreatedAt: j.CreatedAt,
			Fields: orderedFields(s.RawData(), j.Data)})
	}
	if p.Webhooks, err = accountWebhooks(e.App, hooks); err != nil {
		return err
	}
	versions, err := sp.deploys.ListVersions(dep)
	if err != nil {
		return err
	}
	for _, v := range versions {
		p.Versions = append(p.Versions, ui.AccountVersion{
			Number: v.Number, CreatedAt: timestamp(v.Created), FileCount: v.FileCount,
			TotalBytes: formatSizeShort(v.TotalBytes), Live: v.Live,
		})
	}
	if p.Analytics, err = sp.analytics(e.App, dep.Id, time.Now()); err != nil {
		return err
	}
	if p.Domains, err = sp.domains.siteDomains(e, user, dep); err != nil {
		return err
	}
	return render(e, http.StatusOK, ui.AccountSite(sp.sessions.layout(e, user), p))
}

// accountSiteRollback is a version's "Make live" button on the site page.
func (sp *sitePages) accountSiteRollback(e *core.RequestEvent) error {
	dep, err := sp.formSite(e)
	if dep == nil {
		return err
	}
	n, err := strconv.Atoi(e.Request.PostForm.Get("version"))
	if err != nil || n < 1 {
		return sp.backToSite(e, dep, ui.FlashError, "No such version: pick one from the list.")
	}
	if _, err := sp.deploys.Rollback(dep, n); errors.Is(err, sites.ErrVersionNotFound) {
		return sp.backToSite(e, dep, ui.FlashError, "Version "+strconv.Itoa(n)+" is no longer kept.")
	} else if err != nil {
		return err
	}
	return sp.backToSite(e, dep, ui.FlashSuccess, "Version "+strconv.Itoa(n)+" is live.")
}

// formatSizeShort writes a size for people: 512 B, 12.3 KB, 4.5 MB.
func formatSizeShort(n int64) string {
	switch {
	case n < 1000:
		return strconv.FormatInt(n, 10) + " B"
	case n < 1000*1000:
		return strconv.FormatFloat(float64(n)/1000, 'f', 1, 64) + " KB"
	}
	return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) + " MB"
}

// accountSiteCSV is the site page's CSV download (cookie-authenticated).
func (sp *sitePages) accountSiteCSV(e *core.RequestEvent) error {
	dep, err := sp.pageSite(e, sp.sessions.user(e))
	if dep == nil {
		return err
	}
	return submissionsCSV(e, dep)
}

// accountSiteNotifications is the notifications toggle of the site page.
func (sp *sitePages) accountSiteNotifications(e *core.RequestEvent) error {
	dep, err := sp.formSite(e)
	if dep == nil {
		return err
	}
	on := e.Request.PostForm.Get("email") == "true"
	if err := setNotifyEmail(e.App, dep, on); err != nil {
		return err
	}
	if on {
		return sp.backToSite(e, dep, ui.FlashSuccess, "New submissions will be mailed to you.")
	}
	return sp.backToSite(e, dep, ui.FlashSuccess, "New submissions are no longer mailed.")
}
