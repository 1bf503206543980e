package hooks

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
	"sitedrop/sites/forms"
	"sitedrop/ui"
)

// accountSitePageSize is how many submissions a site page shows.
const accountSitePageSize = 50

// bindAccountSitePages registers the owner's page of one site.
func bindAccountSitePages(sd *sitedrop, se *core.ServeEvent) {
	r := se.Router
	r.GET("/account/sites/{id}", sd.accountSitePage)
	r.GET("/account/sites/{id}/submissions.csv", sd.accountSiteCSV)
	r.POST("/account/sites/{id}/notifications", sd.accountSiteNotifications)
	r.POST("/account/sites/{id}/rollback", sd.accountSiteRollback)
	r.POST("/account/sites/{id}/settings", sd.accountSiteSettings)
	r.POST("/account/sites/{id}/protection", sd.accountSiteProtection)
	r.GET("/account/sites/{id}/delete", sd.accountSiteDeletePage)
	r.POST("/account/sites/{id}/delete", sd.accountSiteDelete)
	r.POST("/account/sites/{id}/submissions/{subId}/delete", sd.accountSubmissionDelete)
	r.POST("/account/sites/{id}/webhooks", sd.accountWebhookCreate)
	r.POST("/account/sites/{id}/webhooks/{webhookId}/test", sd.accountWebhookTest)
	r.POST("/account/sites/{id}/webhooks/{webhookId}/deliveries/{deliveryId}/redeliver", sd.accountWebhookRedeliver)
	r.POST("/account/sites/{id}/webhooks/{webhookId}/delete", sd.accountSiteWebhookDelete)
}

// backToSite answers a site page's form post: the message for the next
// page, and 303 to the site page (POST → redirect → GET).
func (sd *sitedrop) backToSite(e *core.RequestEvent, dep *core.Record, kind, text string) error {
	sd.sessions.flash(e, kind, text)
	return e.Redirect(http.StatusSeeOther, "/account/sites/"+dep.Id)
}

// pageSite returns the signed-in user's deployment {id}; for anyone else
// the answer (redirect to sign-in, or 404 page) is decided.
func (sd *sitedrop) pageSite(e *core.RequestEvent, user *core.Record) (*core.Record, error) {
	if user == nil {
		return nil, e.Redirect(http.StatusSeeOther, loginURL(e.Request.URL.Path))
	}
	dep, err := sd.svc.FindOwned(user, e.Request.PathValue("id"))
	if err != nil {
		return nil, sd.sessions.errorPage(e, http.StatusNotFound, "Site not found", "There is no such site on your account.")
	}
	return dep, nil
}

// formSite checks a form post of a site page (see formUser) and returns
// the signed-in user's site {id}; with a nil site the answer is decided.
func (sd *sitedrop) formSite(e *core.RequestEvent) (*core.Record, error) {
	user, err := sd.kit.formUser(e)
	if user == nil {
		return nil, err
	}
	return sd.pageSite(e, user)
}

// accountSitePage is GET /account/sites/{id}?page=: the state, settings,
// submissions, e-mail notifications, versions and webhooks of one site.
func (sd *sitedrop) accountSitePage(e *core.RequestEvent) error {
	user := sd.sessions.user(e)
	dep, err := sd.pageSite(e, user)
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
		ID: dep.Id, Slug: slug, Title: d.Title(), URL: sd.cfg.siteURL(slug),
		Disabled: d.Status() != sites.StatusActive,
		Settings: ui.SiteSettings{
			Title: d.Title(), Description: d.Description(),
			Favicon: d.Favicon(), IsSPA: d.IsSPA(),
		},
		SubmitURL:   sd.cfg.webURL() + "/submit/" + dep.Id,
		NotifyEmail: d.NotifyEmail(), Total: int(total), Page: page,
		Drop:          dropProps(sd.cfg, "Deploy again", user, dep.Id),
		WebhookEvents: forms.WebhookEvents,
		Protection:    sd.siteProtection(dep),
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
	versions, err := sd.svc.ListVersions(dep)
	if err != nil {
		return err
	}
	for _, v := range versions {
		p.Versions = append(p.Versions, ui.AccountVersion{
			Number: v.Number, CreatedAt: timestamp(v.Created), FileCount: v.FileCount,
			TotalBytes: formatSizeShort(v.TotalBytes), Live: v.Live,
		})
	}
	if p.Analytics, err = sd.pageAnalytics(e.App, dep.Id, time.Now()); err != nil {
		return err
	}
	if p.Domains, err = sd.siteDomains(e, user, dep); err != nil {
		return err
	}
	return render(e, http.StatusOK, ui.AccountSite(sd.sessions.layout(e, user), p))
}

// accountSiteRollback is a version's "Make live" button on the site page.
func (sd *sitedrop) accountSiteRollback(e *core.RequestEvent) error {
	dep, err := sd.formSite(e)
	if dep == nil {
		return err
	}
	n, err := strconv.Atoi(e.Request.PostForm.Get("version"))
	if err != nil || n < 1 {
		return sd.backToSite(e, dep, ui.FlashError, "No such version: pick one from the list.")
	}
	if _, err := sd.svc.Rollback(dep, n); errors.Is(err, sites.ErrVersionNotFound) {
		return sd.backToSite(e, dep, ui.FlashError, "Version "+strconv.Itoa(n)+" is no longer kept.")
	} else if err != nil {
		return err
	}
	return sd.backToSite(e, dep, ui.FlashSuccess, "Version "+strconv.Itoa(n)+" is live.")
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
func (sd *sitedrop) accountSiteCSV(e *core.RequestEvent) error {
	dep, err := sd.pageSite(e, sd.sessions.user(e))
	if dep == nil {
		return err
	}
	return submissionsCSV(e, dep)
}

// accountSiteNotifications is the notifications toggle of the site page.
func (sd *sitedrop) accountSiteNotifications(e *core.RequestEvent) error {
	dep, err := sd.formSite(e)
	if dep == nil {
		return err
	}
	on := e.Request.PostForm.Get("email") == "true"
	if err := setNotifyEmail(e.App, dep, on); err != nil {
		return err
	}
	if on {
		return sd.backToSite(e, dep, ui.FlashSuccess, "New submissions will be mailed to you.")
	}
	return sd.backToSite(e, dep, ui.FlashSuccess, "New submissions are no longer mailed.")
}
