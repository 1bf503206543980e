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
// forms, behind the signed-in owner's site (auth), which a form post
// reaches only once it is read (pageForm).
func bindAccountSitePages(r *router.Router[*core.RequestEvent], auth *pageAuth, site *sitePages, settings *settingsPages, protection *protectionPages, hooks *webhookPages, domainPg *domainPages) {
	pages := r.Group("/account/sites/{id}").Bind(auth.requirePageUser(""), auth.requirePageOwner("id"))
	pages.GET("", site.accountSitePage)
	pages.GET("/submissions.csv", site.accountSiteCSV)
	pages.GET("/delete", settings.accountSiteDeletePage)
	posts := r.Group("/account/sites/{id}").Bind(auth.pageForm(), auth.requirePageUser("/account"), auth.requirePageOwner("id"))
	posts.POST("/notifications", site.accountSiteNotifications)
	posts.POST("/rollback", site.accountSiteRollback)
	posts.POST("/settings", settings.accountSiteSettings)
	posts.POST("/protection", protection.accountSiteProtection)
	posts.POST("/delete", settings.accountSiteDelete)
	posts.POST("/submissions/{subId}/delete", site.accountSubmissionDelete)
	posts.POST("/webhooks", hooks.accountWebhookCreate)
	webhook := posts.Group("/webhooks/{webhookId}").Bind(hooks.requireSiteWebhook("webhookId"))
	webhook.POST("/test", hooks.accountWebhookTest)
	webhook.POST("/deliveries/{deliveryId}/redeliver", hooks.accountWebhookRedeliver)
	webhook.POST("/delete", hooks.accountSiteWebhookDelete)
	posts.POST("/domains", domainPg.accountDomainCreate)
	domain := posts.Group("/domains/{domain}").Bind(domainPg.requireSiteDomain("domain"))
	domain.POST("/verify", domainPg.accountDomainVerify)
	domain.POST("/delete", domainPg.accountDomainDelete)
}

// siteForms is what every page of one site shares: the site's service,
// and answering a form post with a flash.
type siteForms struct {
	deploys  *sites.Service
	sessions *sessions
}

// sitePages are the site page itself and its small forms (rollback,
// notifications, submissions).
type sitePages struct {
	*siteForms
	cfg   *Config
	links sites.Links // the addresses given out, built at serve time
	// analytics is the site page's analytics panel.
	analytics func(app core.App, dep string, now time.Time) (ui.SiteAnalytics, error)
	// domains renders the custom domains panel.
	domains *domainPages
}

// backToSite answers a site page's form post: the message for the next
// page, and 303 to the site page (POST → redirect → GET).
func (f *siteForms) backToSite(e *core.RequestEvent, dep *core.Record, kind, text string) error {
	return f.sessions.back(e, "/account/sites/"+dep.Id, kind, text)
}

// refused answers a form post that err refused, when the client caused it
// (a limit of the routes, a refusal of sites/domains: domainRefusal):
// prefix and the reason in a flash, 303 to the site page. Any other error
// is the answer as it is.
func (f *siteForms) refused(e *core.RequestEvent, dep *core.Record, prefix string, err error) error {
	if ae, ok := domainRefusal(err); ok {
		return f.backToSite(e, dep, ui.FlashError, prefix+sentence(ae.Message))
	}
	return err
}

// accountSitePage is GET /account/sites/{id}?page=: the state, settings,
// submissions, e-mail notifications, versions and webhooks of one site.
func (sp *sitePages) accountSitePage(e *core.RequestEvent) error {
	user, dep := userOf(e), ownedOf(e)
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
		ID: dep.Id, Slug: slug, Title: d.Title(), URL: sp.links.Site(slug),
		Disabled: d.Status() != sites.StatusActive,
		Settings: ui.SiteSettings{
			Title: d.Title(), Description: d.Description(),
			Favicon: d.Favicon(), IsSPA: d.IsSPA(),
		},
		SubmitURL:   sp.links.Web() + "/submit/" + dep.Id,
		NotifyEmail: d.NotifyEmail(), Total: int(total), Page: page,
		Drop:          dropProps(sp.cfg, "Deploy again", user, dep.Id),
		WebhookEvents: forms.WebhookEvents,
		Protection:    siteProtection(sp.links, dep),
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
			TotalBytes: ui.SizeShort(v.TotalBytes), Live: v.Live,
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
	dep := ownedOf(e)
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

// accountSiteCSV is the site page's CSV download (cookie-authenticated).
func (sp *sitePages) accountSiteCSV(e *core.RequestEvent) error {
	return submissionsCSV(e, ownedOf(e))
}

// accountSiteNotifications is the notifications toggle of the site page.
func (sp *sitePages) accountSiteNotifications(e *core.RequestEvent) error {
	dep := ownedOf(e)
	on := e.Request.PostForm.Get("email") == "true"
	if err := setNotifyEmail(e.App, dep, on); err != nil {
		return err
	}
	if on {
		return sp.backToSite(e, dep, ui.FlashSuccess, "New submissions will be mailed to you.")
	}
	return sp.backToSite(e, dep, ui.FlashSuccess, "New submissions are no longer mailed.")
}

// accountSubmissionDelete is a submission's delete button on the site page.
func (sp *sitePages) accountSubmissionDelete(e *core.RequestEvent) error {
	dep := ownedOf(e)
	if _, err := forms.DeleteSubmission(e.App, dep.Id, e.Request.PathValue("subId")); errors.Is(err, forms.ErrSubmissionNotFound) {
		// Gone already (a second click, a reload): say so, change nothing.
		return sp.backToSite(e, dep, ui.FlashError, "That submission no longer exists.")
	} else if err != nil {
		return err
	}
	return sp.backToSite(e, dep, ui.FlashSuccess, "Submission deleted.")
}
