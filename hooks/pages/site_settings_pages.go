package pages

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/pocketbase/pocketbase/core"

	"sitedrop/hooks/internal/apierr"
	"sitedrop/sites"
	"sitedrop/sites/intake"
	"sitedrop/sites/wire"
	"sitedrop/ui"
)

// settingsPages are the Settings tab, its settings form and the site's
// delete page and button.
type settingsPages struct {
	*siteForms
	// gate limits and holds the deploys a settings change makes.
	gate *intake.Gate
}

// settingsTab is GET /account/sites/{id}/settings: title, description,
// icon and SPA, protection, and the way to delete the site.
func (st *settingsPages) settingsTab(e *core.RequestEvent) error {
	dep := ownedOf(e)
	d := sites.DeploymentOf(dep)
	p := ui.SiteSettingsProps{
		Settings:   ui.SiteSettings{Title: d.Title(), Description: d.Description(), Favicon: d.Favicon(), IsSPA: d.IsSPA()},
		Protection: siteProtection(st.links, dep),
	}
	var err error
	if p.Controls, err = siteControls(e.App, st.links, dep, time.Now()); err != nil {
		return err
	}
	return st.tab(e, func(lp ui.LayoutProps, h ui.SiteHead) templ.Component { return ui.SiteSettingsTab(lp, h, p) })
}

// accountSiteSettings is the Settings tab's settings form. The fields pass the
// API's checks (intake.CheckMetadata); a new title, description or icon
// makes a new version through the service, as a PUT would.
func (st *settingsPages) accountSiteSettings(e *core.RequestEvent) error {
	dep := ownedOf(e)
	f := e.Request.PostForm
	title, desc, icon := f.Get("title"), f.Get("description"), f.Get("favicon")
	spa := f.Get("is_spa") == "true"
	meta, err := intake.CheckMetadata(&wire.DeployRequest{Title: &title, Description: &desc, Favicon: &icon, IsSPA: &spa})
	if err != nil {
		return st.refused(e, dep, ui.PanelSettings, "Settings not saved: ", err)
	}
	d := sites.DeploymentOf(dep)
	if title != d.Title() || desc != d.Description() || icon != d.Favicon() {
		// A new version: a deploy, under the API's per-account rate and
		// the --concurrent-deploys slots.
		if err := apierr.RateRefusal(e.Response, st.gate.Keyed.Check(d.OwnerID())); err != nil {
			return st.refused(e, dep, ui.PanelSettings, "Settings not saved: ", err)
		}
		release, err := st.gate.Acquire(e.Request.Context())
		if err != nil {
			return err
		}
		defer release()
	}
	before := d.LiveVersion()
	out, changed, err := st.deploys.UpdateSettings(e.Request.Context(), dep, meta)
	if err != nil {
		return err
	}
	switch {
	case !changed:
		return st.backToSite(e, dep, ui.PanelSettings, ui.FlashSuccess, "Nothing to change.")
	case sites.DeploymentOf(out).LiveVersion() != before:
		live, err := sites.FindLiveVersion(e.App, out)
		if err != nil {
			return err
		} else if live != nil {
			return st.backToSite(e, dep, ui.PanelSettings, ui.FlashSuccess, "Settings saved: version "+strconv.Itoa(live.Number)+" is live.")
		}
	}
	return st.backToSite(e, dep, ui.PanelSettings, ui.FlashSuccess, "Settings saved.")
}

// accountSiteDeletePage is GET /account/sites/{id}/delete: the
// confirmation, which asks for the slug.
func (st *settingsPages) accountSiteDeletePage(e *core.RequestEvent) error {
	user, dep := userOf(e), ownedOf(e)
	d := sites.DeploymentOf(dep)
	slug := d.Slug()
	return Render(e, http.StatusOK, ui.SiteDelete(st.sessions.layout(e, user), ui.SiteDeleteProps{
		ID: dep.Id, Slug: slug, Title: d.Title(), URL: st.links.Site(slug),
	}))
}

// accountSiteDelete deletes the site when the typed slug matches, as
// DELETE /deploy/{id} does, and goes to the account page.
func (st *settingsPages) accountSiteDelete(e *core.RequestEvent) error {
	dep := ownedOf(e)
	slug := sites.DeploymentOf(dep).Slug()
	if strings.TrimSpace(e.Request.PostForm.Get("slug")) != slug {
		return st.sessions.back(e, "/account/sites/"+dep.Id+"/delete", ui.FlashError, "The slug you typed does not match "+slug+": the site was not deleted.")
	}
	if err := st.deploys.Delete(e.Request.Context(), dep); err != nil {
		return err
	}
	return st.sessions.back(e, "/account", ui.FlashSuccess, "Site "+slug+" deleted.")
}
