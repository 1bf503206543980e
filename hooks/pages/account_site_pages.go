package pages

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/a-h/templ"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/router"

	"sitedrop/hooks/internal/apierr"
	"sitedrop/sites"
	"sitedrop/sites/forms"
	"sitedrop/ui"
)

// accountSitePageSize is how many submissions the Forms tab shows.
const accountSitePageSize = 50

// maxFormsPage bounds the Forms tab's ?page=, as the API's submissions
// list bounds its own.
const maxFormsPage = 1000000

// bindAccountSitePages registers the owner's page of one site, one tab per
// URL (Overview, Deploys, Analytics, Forms, Domains, Settings), its
// confirmation pages and its forms, behind the signed-in owner's site
// (auth), which a form post reaches only once it is read (pageForm). Each
// form post answers 303 to its own tab, at the panel that shows its
// message.
func bindAccountSitePages(r *router.Router[*core.RequestEvent], auth *pageAuth, s Services) {
	sf := &siteForms{deploys: s.Deploys, sessions: s.Sessions, links: s.Links, refusal: s.Answers.Domain}
	site := &sitePages{siteForms: sf, limits: s.Limits, analytics: s.Analytics, csv: s.SubmissionsCSV}
	settings := &settingsPages{siteForms: sf, gate: s.Gate}
	protection := &protectionPages{siteForms: sf}
	hooks := &webhookPages{siteForms: sf, guard: s.WebhookGuard, sends: s.WebhookSends, ref: s.DeploymentRef, wake: s.Wake}
	domainPg := &domainPages{siteForms: sf, start: s.DomainStart, domains: s.Domains, siteHost: s.SiteHost}
	pages := r.Group("/account/sites/{id}").Bind(auth.requirePageUser(""), auth.requirePageOwner("id"))
	pages.GET("", site.overviewTab)
	pages.GET("/deploys", site.deploysTab)
	pages.GET("/analytics", site.analyticsTab)
	pages.GET("/forms", site.formsTab)
	pages.GET("/domains", domainPg.domainsTab)
	pages.GET("/settings", settings.settingsTab)
	pages.GET("/submissions.csv", site.accountSiteCSV)
	pages.GET("/submissions/{subId}/delete", site.submissionDeletePage)
	pages.GET("/webhooks/{webhookId}/delete", hooks.webhookDeletePage).Bind(hooks.requireSiteWebhook("webhookId"))
	pages.GET("/delete", settings.accountSiteDeletePage)
	posts := r.Group("/account/sites/{id}").Bind(auth.pageForm(), auth.requirePageUser("/account"), auth.requirePageOwner("id"))
	posts.POST("/notifications", site.accountSiteNotifications)
	posts.POST("/rollback", site.accountSiteRollback)
	posts.POST("/settings", settings.accountSiteSettings)
	posts.POST("/protection", protection.accountSiteProtection)
	posts.POST("/delete", settings.accountSiteDelete)
	controls := &controlPages{settings, s.Answers.Any} // pause, resume, rename
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

// siteForms is what every tab of one site shares: the site's service,
// its head, and answering a form post with a flash.
type siteForms struct {
	deploys  *sites.Service
	sessions *Sessions
	links    sites.Links // the addresses given out, built at serve time
	// refusal is the API's answer to a limit of the routes or a refusal
	// of sites/domains (Answers.Domain).
	refusal func(error) (*apierr.Error, bool)
}

// sitePages are the Overview, Deploys, Analytics and Forms tabs and their
// small forms (rollback, notifications, submissions).
type sitePages struct {
	*siteForms
	limits Limits
	// csv streams the site's submissions (Services.SubmissionsCSV).
	csv func(e *core.RequestEvent, dep *core.Record) error
	// analytics are the site's visits (see siteAnalytics).
	analytics func(app core.App, dep string, now time.Time) (ui.SiteAnalytics, error)
}

// head is what every tab of dep's page shows of it.
func (f *siteForms) head(dep *core.Record) ui.SiteHead {
	d := sites.DeploymentOf(dep)
	return ui.SiteHead{ID: dep.Id, Slug: d.Slug(), Title: d.Title(), URL: f.links.Site(d.Slug()),
		Disabled: d.Status() != sites.StatusActive, Paused: d.Paused(), TakenDown: d.TakedownReason()}
}

// tab renders a tab of dep's page: the frame's layout for the signed-in
// owner (with the messages a form post left) and page.
func (f *siteForms) tab(e *core.RequestEvent, page func(ui.LayoutProps, ui.SiteHead) templ.Component) error {
	return Render(e, http.StatusOK, page(f.sessions.layout(e, userOf(e)), f.head(ownedOf(e))))
}

// backToSite answers a form post of a site tab: the message for panel,
// and 303 to panel's tab at panel (POST → redirect → GET).
func (f *siteForms) backToSite(e *core.RequestEvent, dep *core.Record, panel ui.SitePanel, kind, text string) error {
	return f.sessions.backToPanel(e, ui.TabPath(dep.Id, panel.Tab), panel.ID, kind, text)
}

// refused answers a form post that err refused, when the client caused it
// (a limit of the routes, a refusal of sites/domains: refusal):
// prefix and the reason in a flash for panel, 303 to its tab. Any other
// error is the answer as it is.
func (f *siteForms) refused(e *core.RequestEvent, dep *core.Record, panel ui.SitePanel, prefix string, err error) error {
	if ae, ok := f.refusal(err); ok {
		return f.backToSite(e, dep, panel, ui.FlashError, prefix+apierr.Sentence(ae.Message))
	}
	return err
}

// overviewTab is GET /account/sites/{id}: the site's state, address, last
// deploy and visits sparkline, and the drop zone. The links of the one
// page the site page was (?page=N of the submissions, ?changes=N of a
// version) go on to the tab that shows them now.
func (sp *sitePages) overviewTab(e *core.RequestEvent) error {
	user, dep := userOf(e), ownedOf(e)
	q := e.Request.URL.Query()
	switch {
	case q.Has("changes"):
		return e.Redirect(http.StatusSeeOther, ui.TabPath(dep.Id, ui.TabDeploys)+"?changes="+url.QueryEscape(q.Get("changes"))+"#changes-h")
	case q.Has("page"):
		return e.Redirect(http.StatusSeeOther, ui.TabPath(dep.Id, ui.TabForms)+"?page="+url.QueryEscape(q.Get("page"))+"#"+ui.PanelSubmissions.ID)
	}
	live, err := sites.FindLiveVersion(e.App, dep)
	if err != nil {
		return err
	}
	a, err := sp.analytics(e.App, dep.Id, time.Now())
	if err != nil {
		return err
	}
	p := ui.SiteOverviewProps{
		Protection: siteProtection(sp.links, dep), Visits: a.Days, AnalyticsOff: a.Off,
		Drop: dropProps(sp.limits, "Deploy again", user, dep.Id),
	}
	if live != nil {
		v := sp.accountVersion(sites.DeploymentOf(dep).Slug(), *live)
		p.Live = &v
	}
	return sp.tab(e, func(lp ui.LayoutProps, h ui.SiteHead) templ.Component { return ui.SiteOverview(lp, h, p) })
}

// deploysTab is GET /account/sites/{id}/deploys?changes=N: the versions,
// the changes of version N, and the drop zone.
func (sp *sitePages) deploysTab(e *core.RequestEvent) error {
	user, dep := userOf(e), ownedOf(e)
	p := ui.SiteDeploysProps{Drop: dropProps(sp.limits, "Deploy again", user, dep.Id)}
	var err error
	if p.Versions, p.Changes, err = sp.siteVersions(dep, sites.DeploymentOf(dep).Slug(), e.Request.URL.Query().Get("changes")); err != nil {
		return err
	}
	return sp.tab(e, func(lp ui.LayoutProps, h ui.SiteHead) templ.Component { return ui.SiteDeploys(lp, h, p) })
}

// analyticsTab is GET /account/sites/{id}/analytics: the visits.
func (sp *sitePages) analyticsTab(e *core.RequestEvent) error {
	a, err := sp.analytics(e.App, ownedOf(e).Id, time.Now())
	if err != nil {
		return err
	}
	return sp.tab(e, func(lp ui.LayoutProps, h ui.SiteHead) templ.Component { return ui.SiteAnalyticsTab(lp, h, a) })
}

// formsTab is GET /account/sites/{id}/forms?page=N: the form endpoint,
// page N of the submissions, e-mail notifications and webhooks.
func (sp *sitePages) formsTab(e *core.RequestEvent) error {
	dep := ownedOf(e)
	page, _ := strconv.Atoi(e.Request.URL.Query().Get("page"))
	page = min(max(page, 1), maxFormsPage)
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
	p := ui.SiteFormsProps{
		SubmitURL:   sp.links.Web() + "/submit/" + dep.Id,
		NotifyEmail: sites.DeploymentOf(dep).NotifyEmail(), Total: int(total), Page: page, PageSize: accountSitePageSize,
		WebhookEvents: forms.WebhookEvents,
	}
	for _, s := range subs {
		p.Submissions = append(p.Submissions, accountSubmission(s))
	}
	if p.Webhooks, err = accountWebhooks(e.App, hooks); err != nil {
		return err
	}
	return sp.tab(e, func(lp ui.LayoutProps, h ui.SiteHead) templ.Component { return ui.SiteForms(lp, h, p) })
}

// accountSubmission is submission s as the Forms tab shows it.
func accountSubmission(s *forms.Submission) ui.AccountSubmission {
	j := s.JSON()
	return ui.AccountSubmission{ID: j.ID, CreatedAt: j.CreatedAt, Fields: SubmissionFields(forms.OrderedFields(s.RawData(), j.Data))}
}

// submissionDeletePage is GET .../submissions/{subId}/delete: the
// submission and the button that deletes it. One already gone goes back
// to the submissions, saying so.
func (sp *sitePages) submissionDeletePage(e *core.RequestEvent) error {
	dep := ownedOf(e)
	s, err := forms.FindSubmission(e.App, dep.Id, e.Request.PathValue("subId"))
	if errors.Is(err, forms.ErrSubmissionNotFound) {
		return sp.backToSite(e, dep, ui.PanelSubmissions, ui.FlashError, "That submission no longer exists.")
	} else if err != nil {
		return err
	}
	p := ui.SubmissionDeleteProps{Submission: accountSubmission(s)}
	return sp.tab(e, func(lp ui.LayoutProps, h ui.SiteHead) templ.Component { return ui.SubmissionDelete(lp, h, p) })
}

// siteVersions are the Deploys tab's versions, newest first, and the
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
		av := sp.accountVersion(slug, v)
		av.Newer = v.Number > live
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

// accountVersion is version v of the site slug as the tabs show it.
func (sp *sitePages) accountVersion(slug string, v sites.VersionInfo) ui.AccountVersion {
	av := ui.AccountVersion{
		Number: v.Number, CreatedAt: timestamp(v.Created), FileCount: v.FileCount,
		TotalBytes: ui.SizeShort(v.TotalBytes), Live: v.Live,
		Message: v.Message, PreviewURL: sp.links.Preview(slug, v.Number),
	}
	for _, a := range v.Aliases {
		av.Aliases = append(av.Aliases, ui.AccountAlias{Name: a, URL: sp.links.Alias(slug, a)})
	}
	return av
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
		return sp.backToSite(e, dep, ui.PanelVersions, ui.FlashError, "No such version: pick one from the list.")
	}
	if _, err := sp.deploys.Promote(e.Request.Context(), dep, n); errors.Is(err, sites.ErrVersionNotFound) {
		return sp.backToSite(e, dep, ui.PanelVersions, ui.FlashError, "Version "+strconv.Itoa(n)+" is no longer kept.")
	} else if err != nil {
		return err
	}
	return sp.backToSite(e, dep, ui.PanelVersions, ui.FlashSuccess, "Version "+strconv.Itoa(n)+" is live.")
}

// accountSiteCSV is the site page's CSV download (cookie-authenticated).
func (sp *sitePages) accountSiteCSV(e *core.RequestEvent) error {
	return sp.csv(e, ownedOf(e))
}

// accountSiteNotifications is the notifications toggle of the site page.
func (sp *sitePages) accountSiteNotifications(e *core.RequestEvent) error {
	dep := ownedOf(e)
	on := e.Request.PostForm.Get("email") == "true"
	if err := forms.SetNotifyEmail(e.App, forms.DeploymentOf(dep), on); err != nil {
		return err
	}
	if on {
		return sp.backToSite(e, dep, ui.PanelNotifications, ui.FlashSuccess, "New submissions will be mailed to you.")
	}
	return sp.backToSite(e, dep, ui.PanelNotifications, ui.FlashSuccess, "New submissions are no longer mailed.")
}

// accountSubmissionDelete is a submission's delete button on the site page.
func (sp *sitePages) accountSubmissionDelete(e *core.RequestEvent) error {
	dep := ownedOf(e)
	if _, err := forms.DeleteSubmission(e.App, dep.Id, e.Request.PathValue("subId")); errors.Is(err, forms.ErrSubmissionNotFound) {
		// Gone already (a second click, a reload): say so, change nothing.
		return sp.backToSite(e, dep, ui.PanelSubmissions, ui.FlashError, "That submission no longer exists.")
	} else if err != nil {
		return err
	}
	return sp.backToSite(e, dep, ui.PanelSubmissions, ui.FlashSuccess, "Submission deleted.")
}
