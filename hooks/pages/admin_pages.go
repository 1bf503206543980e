package pages

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/hook"
	"github.com/pocketbase/pocketbase/tools/router"

	"sitedrop/sites"
	"sitedrop/sites/abuse"
	"sitedrop/sites/accounts"
	"sitedrop/ui"
)

// superuserKey is where requireAdmin leaves the signed-in superuser.
const superuserKey = "sitedropSuperuser"

// Moderation is what the moderation page (/admin) is built on; hooks
// hands it in Services.
type Moderation struct {
	// Sessions sign superusers in to the page, apart from the users'.
	Sessions *accounts.AdminSessions
	// Reports are the abuse reports.
	Reports *abuse.Reports
	// Blocks is the blocklist.
	Blocks *sites.Blocklist
	// Settings are the live anonymous deploys' settings.
	Settings *sites.InstanceSettings
}

// adminPages is the moderation page of superusers: the report queue and
// its actions, a site lookup, the blocklist and the anonymous deploys'
// settings, each form POST → 303 → GET /admin with its message beside it.
type adminPages struct {
	m       Moderation
	deploys *sites.Service
	links   sites.Links
	// limit counts a sign-in attempt against the per-client limit of the
	// sign-in codes' checks (SignIn.VerifyLimit).
	limit func(e *core.RequestEvent) error
	auth  *pageAuth
}

// bindAdminPages binds /admin and its forms. The forms are read as the
// account's are (pageForm: same origin, a small body) and need a signed-in
// superuser (else 303 to /admin/login).
func bindAdminPages(r *router.Router[*core.RequestEvent], auth *pageAuth, s Services) {
	if s.Moderation.Sessions == nil {
		return
	}
	a := &adminPages{m: s.Moderation, deploys: s.Deploys, links: s.Links, limit: s.SignIn.VerifyLimit, auth: auth}
	r.GET("/admin/login", a.loginPage)
	r.POST("/admin/login", a.loginForm).Bind(auth.pageForm())
	r.POST("/admin/logout", a.logoutForm).Bind(auth.pageForm())
	r.GET("/admin", a.page).Bind(a.requireAdmin())
	forms := r.Group("/admin").Bind(auth.pageForm(), a.requireAdmin())
	forms.POST("/reports/{id}/dismiss", a.dismiss)
	forms.POST("/sites/{id}/takedown", a.takedown)
	forms.POST("/sites/{id}/restore", a.restore)
	r.GET("/admin/sites/{id}/delete", a.deleteSitePage).Bind(a.requireAdmin()) // asks first
	forms.POST("/sites/{id}/delete", a.deleteSite)
	forms.POST("/sites/{id}/block", a.blockContent)
	forms.POST("/accounts/{id}/ban", a.ban)
	forms.POST("/accounts/{id}/unban", a.unban)
	forms.POST("/blocks", a.blockAdd)
	forms.POST("/blocks/{id}/remove", a.blockRemove)
	forms.POST("/anon", a.anonSave)
}

// requireAdmin lets a browser signed in as a superuser through (the
// superuser on the event, and as its auth, so that the audit log names
// the superuser as it does for the admin API), and sends anyone else to
// /admin/login.
func (a *adminPages) requireAdmin() *hook.Handler[*core.RequestEvent] {
	return middleware("sitedropRequireAdmin", func(e *core.RequestEvent) error {
		su := a.m.Sessions.Superuser(e.Request)
		if su == nil {
			return e.Redirect(http.StatusSeeOther, "/admin/login")
		}
		e.Set(superuserKey, su)
		e.Auth = su
		return e.Next()
	})
}

// superuserOf is the superuser requireAdmin left on e.
func superuserOf(e *core.RequestEvent) *core.Record {
	su, _ := e.Get(superuserKey).(*core.Record)
	return su
}

// loginPage is GET /admin/login.
func (a *adminPages) loginPage(e *core.RequestEvent) error {
	if a.m.Sessions.Superuser(e.Request) != nil {
		return e.Redirect(http.StatusSeeOther, "/admin")
	}
	p := ui.AdminLoginProps{SignedOut: e.Request.URL.Query().Get("signed-out") == "1"}
	return Render(e, http.StatusOK, ui.AdminLogin(ui.LayoutProps{}, p))
}

// loginForm is POST /admin/login (email, password): a superuser's right
// password signs the browser in to the moderation page; a refusal shows
// the form again (429 over the sign-in limit, 401 otherwise), changing
// nothing.
func (a *adminPages) loginForm(e *core.RequestEvent) error {
	p := ui.AdminLoginProps{Email: strings.TrimSpace(e.Request.PostForm.Get("email"))}
	if err := a.limit(e); err != nil {
		ae, _ := a.auth.answer(err)
		if ae == nil {
			return err
		}
		p.Error = ae.Message
		return Render(e, ae.Status, ui.AdminLogin(ui.LayoutProps{}, p))
	}
	su, err := a.m.Sessions.SignIn(p.Email, e.Request.PostForm.Get("password"))
	if errors.Is(err, accounts.ErrAdminCredentials) {
		p.Error = "Wrong e-mail address or password."
		return Render(e, http.StatusUnauthorized, ui.AdminLogin(ui.LayoutProps{}, p))
	}
	if err != nil {
		return err
	}
	if err := a.m.Sessions.Start(e.Response, e.Request, su); err != nil {
		return err
	}
	return e.Redirect(http.StatusSeeOther, "/admin")
}

// logoutForm is POST /admin/logout.
func (a *adminPages) logoutForm(e *core.RequestEvent) error {
	if err := a.m.Sessions.End(e.Response, e.Request); err != nil {
		return err
	}
	return e.Redirect(http.StatusSeeOther, "/admin/login?signed-out=1")
}

// adminQueueDecided is how many decided reports the queue shows after
// the open ones.
const adminQueueDecided = 20

// page is GET /admin[?site=slug-or-url].
func (a *adminPages) page(e *core.RequestEvent) error {
	now := time.Now()
	p := ui.AdminProps{Superuser: superuserOf(e).Email(), BlockKinds: sites.BlockKinds}
	var err error
	if p.OpenCount, err = a.m.Reports.CountOpen(); err != nil {
		return err
	}
	open, err := a.m.Reports.List(abuse.Filter{Status: abuse.StatusOpen, Limit: 200})
	if err != nil {
		return err
	}
	recent, err := a.m.Reports.List(abuse.Filter{Limit: adminQueueDecided + len(open)})
	if err != nil {
		return err
	}
	for i := len(open) - 1; i >= 0; i-- { // oldest open first
		p.Reports = append(p.Reports, a.report(e.App, open[i], now))
	}
	shown := 0
	for _, r := range recent {
		if r.Status() != abuse.StatusOpen && shown < adminQueueDecided {
			p.Reports = append(p.Reports, a.report(e.App, r, now))
			shown++
		}
	}
	if q := strings.TrimSpace(e.Request.URL.Query().Get("site")); q != "" {
		p.Lookup = q
		if dep := a.lookup(e.App, q); dep != nil {
			s := a.site(e.App, dep, ui.AdminPanelLookup, now)
			p.Site = &s
		} else {
			p.LookupMiss = "No site is at " + q + "."
		}
	}
	blocks, err := a.m.Blocks.List("")
	if err != nil {
		return err
	}
	for _, b := range blocks {
		p.Blocks = append(p.Blocks, ui.AdminBlock{ID: b.Id, Kind: b.Kind(), Value: b.Value(), Note: b.Note()})
	}
	o, err := a.m.Settings.Overrides()
	if err != nil {
		return err
	}
	pol := a.m.Settings.Anon()
	p.Anon = ui.AdminAnon{Deploys: o.Deploys, TTL: o.TTL, StoragePerIP: o.StoragePerIP, Hold: o.HoldUntilClaimed, DeploysPerHour: o.DeploysPerHour,
		InForce: fmt.Sprintf("deploys %s, sites live %s, %s per IP and hour, %s per IP, held until claimed: %s",
			onOff(pol.Enabled), ui.TimeLeft(pol.TTL), perHour(pol.DeploysPerHour), sites.FormatBytes(pol.StoragePerIP), onOff(pol.HoldUntilClaimed))}
	panels := []string{ui.AdminPanelLookup, ui.AdminPanelBlocklist, ui.AdminPanelAnon}
	for _, r := range p.Reports {
		panels = append(panels, r.Panel)
	}
	return Render(e, http.StatusOK, ui.Admin(a.layout(e).WithPanels(panels...), p))
}

// layout is the page frame with the messages the last form post left.
func (a *adminPages) layout(e *core.RequestEvent) ui.LayoutProps {
	var lp ui.LayoutProps
	for _, f := range a.m.Sessions.TakeFlashes(e.Request) {
		lp.Flashes = append(lp.Flashes, ui.Flash(f))
	}
	return lp
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func perHour(n int) string {
	if n < 0 {
		return "no limit"
	}
	return strconv.Itoa(n)
}

// reportPanel is the id of a report's row.
func reportPanel(id string) string { return "report-" + id }

// report is a report's row, with its site when it still exists.
func (a *adminPages) report(app core.App, r *abuse.Report, now time.Time) ui.AdminReport {
	out := ui.AdminReport{ID: r.Id, Status: r.Status(), Reason: r.Reason(), Details: r.Details(), URL: r.URL(), Email: r.Email(),
		Age: ui.Ago(now, r.Created()), Panel: reportPanel(r.Id)}
	if id := r.DeploymentID(); id != "" {
		if dep, err := sites.FindDeployment(app, id); err == nil {
			s := a.site(app, dep, out.Panel, now)
			out.Site = &s
		}
	}
	return out
}

// site is dep as the page shows it; back is the page part its forms
// come back to.
func (a *adminPages) site(app core.App, dep *sites.Deployment, back string, now time.Time) ui.AdminSite {
	s := ui.AdminSite{ID: dep.Id, Slug: dep.Slug(), URL: a.links.Site(dep.Slug()), OwnerID: dep.OwnerID(), Anonymous: dep.OwnerID() == "",
		Age: ui.Ago(now, dep.Created()), TakenDown: dep.TakedownReason(), Back: back}
	if s.OwnerID != "" {
		if owner, err := sites.FindUser(app, s.OwnerID); err == nil {
			s.OwnerEmail, s.OwnerBanned = owner.Email(), accounts.UserOf(owner).BannedReason()
		}
	}
	if vs, err := a.deploys.ListVersions(dep.Record); err == nil {
		for i := len(vs) - 1; i >= 0 && len(s.Versions) < 3; i-- {
			v := vs[i]
			s.Versions = append(s.Versions, ui.AdminVersion{Number: v.Number, Age: ui.Ago(now, v.Created), Files: v.FileCount, Live: v.Live})
		}
	}
	return s
}

// lookup finds the site of a slug or of a URL (its slug host, a custom
// domain, a preview), nil when none.
func (a *adminPages) lookup(app core.App, q string) *sites.Deployment {
	if dep, err := sites.FindDeploymentBySlug(app, strings.ToLower(q)); err == nil {
		return dep
	}
	if _, dep, err := a.m.Reports.Resolve(q); err == nil && dep != nil {
		return dep
	}
	return nil
}

// reportPanelRE matches the page part a form names in its back field
// when it is a report's row (anything else is the lookup).
var reportPanelRE = regexp.MustCompile(`^report-[a-z0-9]{15}$`)

// back answers a site's or an account's form: 303 to /admin at the part
// the form was in (the lookup shows the site again), its message there.
func (a *adminPages) back(e *core.RequestEvent, dep *sites.Deployment, kind, text string) error {
	to, panel := backOf(e, dep)
	return a.backTo(e, to, panel, kind, text)
}

// backOf is where a site's or an account's form comes back to: the page
// and its part named by the form's back field (or, on a confirmation
// page, the query's), the lookup of dep unless it is a report's row.
func backOf(e *core.RequestEvent, dep *sites.Deployment) (to, panel string) {
	panel = e.Request.PostForm.Get("back")
	if panel == "" {
		panel = e.Request.URL.Query().Get("back")
	}
	to = "/admin"
	if !reportPanelRE.MatchString(panel) {
		panel = ui.AdminPanelLookup
		if dep != nil {
			to += "?site=" + url.QueryEscape(dep.Slug())
		}
	}
	return to, panel
}

// backTo leaves the message for panel and answers 303 to to#panel.
func (a *adminPages) backTo(e *core.RequestEvent, to, panel, kind, text string) error {
	a.m.Sessions.Flash(e.Request, accounts.Flash{Kind: kind, Text: text, Panel: panel})
	return e.Redirect(http.StatusSeeOther, to+"#"+panel)
}

// refused is the message of a refused action: the API's words for a
// client's error; any other error is the server's (500).
func (a *adminPages) refused(err error) (string, error) {
	ae, known := a.auth.answer(err)
	if !known || ae == nil {
		return "", err
	}
	return ae.Message, nil
}

// siteOf is the deployment of the form's path, or a 303 back saying it
// is gone.
func (a *adminPages) siteOf(e *core.RequestEvent) (*sites.Deployment, error) {
	dep, err := sites.FindDeployment(e.App, e.Request.PathValue("id"))
	if err != nil {
		return nil, a.back(e, nil, ui.FlashError, "That site does not exist (any more).")
	}
	return dep, nil
}

// dismiss is POST /admin/reports/{id}/dismiss.
func (a *adminPages) dismiss(e *core.RequestEvent) error {
	id := e.Request.PathValue("id")
	if _, err := a.m.Reports.Dismiss(id, "dismissed by "+superuserOf(e).Email()); err != nil {
		if errors.Is(err, abuse.ErrNotFound) {
			return a.backTo(e, "/admin", ui.AdminPanelLookup, ui.FlashError, "That report does not exist.")
		}
		return err
	}
	return a.backTo(e, "/admin", reportPanel(id), ui.FlashSuccess, "Report dismissed.")
}

// takedown is POST /admin/sites/{id}/takedown (reason, report, back):
// the site is taken down and the report it came with, if any, actioned.
func (a *adminPages) takedown(e *core.RequestEvent) error {
	dep, err := a.siteOf(e)
	if dep == nil {
		return err
	}
	su := superuserOf(e)
	if _, err := a.deploys.TakeDown(e.Request.Context(), dep.Record, e.Request.PostForm.Get("reason"), su.Email()); err != nil {
		msg, err := a.refused(err)
		if err != nil {
			return err
		}
		return a.back(e, dep, ui.FlashError, dep.Slug()+" was not taken down: "+msg)
	}
	if rid := e.Request.PostForm.Get("report"); rid != "" {
		if rep, err := a.m.Reports.Find(rid); err == nil && rep.DeploymentID() == dep.Id {
			if _, err := a.m.Reports.Action(rid, "taken down by "+su.Email()); err != nil {
				return err
			}
		}
	}
	return a.back(e, dep, ui.FlashSuccess, dep.Slug()+" is taken down.")
}

// restore is POST /admin/sites/{id}/restore.
func (a *adminPages) restore(e *core.RequestEvent) error {
	dep, err := a.siteOf(e)
	if dep == nil {
		return err
	}
	if _, err := a.deploys.Restore(e.Request.Context(), dep.Record); err != nil {
		return err
	}
	return a.back(e, dep, ui.FlashSuccess, dep.Slug()+" is restored.")
}

// deleteSitePage is GET /admin/sites/{id}/delete?back=: the question
// asked before a site is deleted, as a page with the POST form, so it
// works without JavaScript.
func (a *adminPages) deleteSitePage(e *core.RequestEvent) error {
	dep, err := a.siteOf(e)
	if dep == nil {
		return err
	}
	to, panel := backOf(e, dep)
	s := a.site(e.App, dep, panel, time.Now())
	return Render(e, http.StatusOK, ui.AdminSiteDelete(a.layout(e), ui.AdminSiteDeleteProps{Site: s, Cancel: to + "#" + panel}))
}

// deleteSite is POST /admin/sites/{id}/delete (back, confirm), the
// confirmation page's button: without confirm=yes (a form from
// elsewhere, an old page) it only goes to the question.
func (a *adminPages) deleteSite(e *core.RequestEvent) error {
	dep, err := a.siteOf(e)
	if dep == nil {
		return err
	}
	if e.Request.PostForm.Get("confirm") != "yes" {
		_, panel := backOf(e, dep)
		return e.Redirect(http.StatusSeeOther, ui.AdminSiteDeletePath(dep.Id, panel))
	}
	if err := a.deploys.Delete(e.Request.Context(), dep.Record); err != nil {
		return err
	}
	return a.back(e, nil, ui.FlashSuccess, dep.Slug()+" is deleted.")
}

// blockContent is POST /admin/sites/{id}/block: the pages of its live
// version are blocked (sites.Blocklist.BlockSiteContent).
func (a *adminPages) blockContent(e *core.RequestEvent) error {
	dep, err := a.siteOf(e)
	if dep == nil {
		return err
	}
	added, err := a.m.Blocks.BlockSiteContent(e.Request.Context(), dep.Record, "", superuserOf(e))
	if err != nil {
		msg, err := a.refused(err)
		if err != nil {
			return err
		}
		return a.back(e, dep, ui.FlashError, "The content of "+dep.Slug()+" was not blocked: "+msg)
	}
	return a.back(e, dep, ui.FlashSuccess, ui.Plural(len(added), "page")+" of "+dep.Slug()+" blocked.")
}

// accountOf is the account of the form's path with the site the form
// was about (its back), or a 303 back saying it is gone.
func (a *adminPages) accountOf(e *core.RequestEvent) (*core.Record, error) {
	user, err := sites.FindUser(e.App, e.Request.PathValue("id"))
	if err != nil {
		return nil, a.back(e, nil, ui.FlashError, "That account does not exist (any more).")
	}
	return user, nil
}

// ban is POST /admin/accounts/{id}/ban (reason, back).
func (a *adminPages) ban(e *core.RequestEvent) error {
	user, err := a.accountOf(e)
	if user == nil {
		return err
	}
	if _, err := a.deploys.Ban(e.Request.Context(), user, e.Request.PostForm.Get("reason"), superuserOf(e).Email()); err != nil {
		msg, err := a.refused(err)
		if err != nil {
			return err
		}
		return a.back(e, nil, ui.FlashError, user.Email()+" was not banned: "+msg)
	}
	return a.back(e, nil, ui.FlashSuccess, user.Email()+" is banned, and their sites are taken down.")
}

// unban is POST /admin/accounts/{id}/unban.
func (a *adminPages) unban(e *core.RequestEvent) error {
	user, err := a.accountOf(e)
	if user == nil {
		return err
	}
	if _, err := a.deploys.Unban(e.Request.Context(), user); err != nil {
		return err
	}
	return a.back(e, nil, ui.FlashSuccess, user.Email()+" is no longer banned; the sites the ban took down are restored.")
}

// blockAdd is POST /admin/blocks (kind, value, note).
func (a *adminPages) blockAdd(e *core.RequestEvent) error {
	f := e.Request.PostForm
	b, err := a.m.Blocks.Add(e.Request.Context(), f.Get("kind"), f.Get("value"), f.Get("note"), superuserOf(e))
	if err != nil {
		msg, err := a.refused(err)
		if err != nil {
			return err
		}
		return a.backTo(e, "/admin", ui.AdminPanelBlocklist, ui.FlashError, "Not blocked: "+msg)
	}
	return a.backTo(e, "/admin", ui.AdminPanelBlocklist, ui.FlashSuccess, b.Value()+" is blocked.")
}

// blockRemove is POST /admin/blocks/{id}/remove.
func (a *adminPages) blockRemove(e *core.RequestEvent) error {
	b, err := a.m.Blocks.Remove(e.Request.Context(), e.Request.PathValue("id"))
	if errors.Is(err, sites.ErrBlockNotFound) {
		return a.backTo(e, "/admin", ui.AdminPanelBlocklist, ui.FlashError, "That block does not exist (any more).")
	}
	if err != nil {
		return err
	}
	return a.backTo(e, "/admin", ui.AdminPanelBlocklist, ui.FlashSuccess, b.Value()+" is no longer blocked.")
}

// anonSave is POST /admin/anon (deploys, hold, ttl, deploys_per_hour,
// storage_per_ip): the overrides, in force at once.
func (a *adminPages) anonSave(e *core.RequestEvent) error {
	f := e.Request.PostForm
	o := sites.AnonOverrides{Deploys: f.Get("deploys"), HoldUntilClaimed: f.Get("hold"),
		TTL: strings.TrimSpace(f.Get("ttl")), StoragePerIP: strings.TrimSpace(f.Get("storage_per_ip"))}
	if s := strings.TrimSpace(f.Get("deploys_per_hour")); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return a.backTo(e, "/admin", ui.AdminPanelAnon, ui.FlashError, "Not saved: deploys per hour is not a number.")
		}
		o.DeploysPerHour = n
	}
	if err := a.m.Settings.SaveOverrides(e.Request.Context(), o); err != nil {
		msg, err := a.refused(err)
		if err != nil {
			return err
		}
		return a.backTo(e, "/admin", ui.AdminPanelAnon, ui.FlashError, "Not saved: "+msg)
	}
	return a.backTo(e, "/admin", ui.AdminPanelAnon, ui.FlashSuccess, "Anonymous deploys' settings saved.")
}
