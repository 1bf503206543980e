package hooks

import (
	"errors"
	"net/http"
	"slices"
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
	controls := &controlPages{settings} // pause, resume, rename
	posts.POST("/rename", controls.accountSiteRename)
	posts.POST("/pause", controls.accountSitePause)
	posts.POST("/resume", controls.accountSiteResume)
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

// accountSitePage is GET /account/sites/{id}?page=&changes=: the state, settings,
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
	if p.Versions, p.Changes, err = sp.siteVersions(dep, slug, e.Request.URL.Query().Get("changes")); err != nil {
		return err
	}
	if p.Analytics, err = sp.analytics(e.App, dep.Id, time.Now()); err != nil {
		return err
	}
	if p.Domains, err = sp.domains.siteDomains(e, user, dep); err != nil {
		return err
	}
	if p.Controls, err = siteControls(e.App, sp.links, dep, time.Now()); err != nil {
		return err
	}
	return render(e, http.StatusOK, ui.AccountSite(sp.sessions.layout(e, user), p))
}

// siteVersions are the site page's versions, newest first, and the
// changes of the version changesParam names (?changes=N: against the
// kept version before it), nil when it names none.
func (sp *sitePages) siteVersions(dep *core.Record, slug, changesParam string) ([]ui.AccountVersion, *ui.VersionChanges, error) {
	versions, err := sp.deploys.ListVersions(dep)
	if err != nil {
		return nil, nil, err
	}
	live := 0
	for _, v := range versions {
		if v.Live {
			live = v.Number
		}
	}
	out := make([]ui.AccountVersion, len(versions))
	for i, v := range versions {
		av := ui.AccountVersion{
			Number: v.Number, CreatedAt: timestamp(v.Created), FileCount: v.FileCount,
			TotalBytes: ui.SizeShort(v.TotalBytes), Live: v.Live, Newer: v.Number > live,
			Message: v.Message, PreviewURL: sp.links.Preview(slug, v.Number),
		}
		for _, a := range v.Aliases {
			av.Aliases = append(av.Aliases, ui.AccountAlias{Name: a, URL: sp.links.Alias(slug, a)})
		}
		if i+1 < len(versions) {
			av.Previous = versions[i+1].Number
		}
		out[i] = av
	}
	if changesParam == "" {
		return out, nil, nil
	}
	n, _ := strconv.Atoi(changesParam)
	i := slices.IndexFunc(out, func(v ui.AccountVersion) bool { return v.Number == n })
	switch {
	case i < 0:
		return out, &ui.VersionChanges{NotKept: "No changes to show: that version is not kept."}, nil
	case out[i].Previous == 0:
		return out, &ui.VersionChanges{To: n, NotKept: "Version " + strconv.Itoa(n) + " is the oldest kept: there is no version before it to compare with."}, nil
	}
	d, err := sp.deploys.DiffVersions(dep, out[i].Previous, n)
	if errors.Is(err, sites.ErrVersionNotFound) {
		// pruned between the list and the diff
		return out, &ui.VersionChanges{NotKept: "No changes to show: that version is no longer kept."}, nil
	} else if err != nil {
		return nil, nil, err
	}
	return out, pageChanges(out[i].Previous, n, d), nil
}

// pageChanges is diff d of version from to version to as the site page
// shows it: sizes made short, each list cut to ui.MaxChangesShown.
func pageChanges(from, to int, d sites.Diff) *ui.VersionChanges {
	c := &ui.VersionChanges{From: from, To: to}
	conv := func(l []sites.DiffEntry, withFrom, withTo bool) ([]ui.ChangedFile, int) {
		shown := l[:min(len(l), ui.MaxChangesShown)]
		out := make([]ui.ChangedFile, len(shown))
		for i, e := range shown {
			out[i].Path = e.Path
			if withFrom {
				out[i].From = ui.SizeShort(e.From)
			}
			if withTo {
				out[i].To = ui.SizeShort(e.To)
			}
		}
		return out, len(l) - len(shown)
	}
	c.Added, c.MoreAdded = conv(d.Added, false, true)
	c.Changed, c.MoreChanged = conv(d.Changed, true, true)
	c.Removed, c.MoreRemoved = conv(d.Removed, true, false)
	return c
}

// accountSiteRollback is a version's "Promote" or "Make live" button on
// the site page: sites.Service.Promote, as POST
// /deploy/{id}/versions/{version}/promote.
func (sp *sitePages) accountSiteRollback(e *core.RequestEvent) error {
	dep := ownedOf(e)
	n, err := strconv.Atoi(e.Request.PostForm.Get("version"))
	if err != nil || n < 1 {
		return sp.backToSite(e, dep, ui.FlashError, "No such version: pick one from the list.")
	}
	if _, err := sp.deploys.Promote(dep, n); errors.Is(err, sites.ErrVersionNotFound) {
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
