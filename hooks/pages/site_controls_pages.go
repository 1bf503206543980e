package pages

import (
	"strings"
	"time"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/hooks/internal/apierr"
	"sitedrop/sites"
	"sitedrop/ui"
)

// controlPages are the site page's owner controls: pause, resume and
// rename, through the service the API uses (so the same rules, record
// hooks and webhooks), under the API's per-account deploy rate. Each
// answers 303 to the site page's controls with a message, a refusal too.
type controlPages struct {
	*settingsPages
	// answer is the API's answer to an error (Answers.Any).
	answer func(error) (*apierr.Error, bool)
}

// siteControls is what the controls panel of dep shows.
func siteControls(app core.App, links sites.Links, dep *core.Record, now time.Time) (ui.SiteControls, error) {
	d := sites.DeploymentOf(dep)
	c := ui.SiteControls{Slug: d.Slug(), URL: links.Site(d.Slug()), SitesDomain: links.SitesDomain, Paused: d.Paused()}
	olds, err := sites.OldSlugs(app, dep.Id, now)
	if err != nil {
		return c, err
	}
	for _, o := range olds {
		c.OldSlugs = append(c.OldSlugs, ui.SiteOldSlug{
			Slug: o.Slug(), URL: links.Site(o.Slug()), Until: o.ExpiresAt().UTC().Format(time.DateOnly),
		})
	}
	return c, nil
}

// back answers a control's post with a message: 303 to the controls.
func (cp *controlPages) back(e *core.RequestEvent, dep *core.Record, kind, text string) error {
	return cp.backToSite(e, dep, ui.PanelControls, kind, text)
}

// refusal answers err with a message when the client caused it (an
// invalid, reserved or taken slug, the rate limit); any other error is
// the answer as it is.
func (cp *controlPages) refusal(e *core.RequestEvent, dep *core.Record, prefix string, err error) error {
	if ae, known := cp.answer(err); known && ae.Status < 500 {
		return cp.back(e, dep, ui.FlashError, prefix+apierr.Sentence(ae.Message))
	}
	return err
}

// accountSiteRename is POST /account/sites/{id}/rename (slug): the new
// slug, the old one redirecting for 30 days (sites.Service.Rename).
func (cp *controlPages) accountSiteRename(e *core.RequestEvent) error {
	dep := ownedOf(e)
	old := sites.DeploymentOf(dep).Slug()
	slug := strings.TrimSpace(e.Request.PostForm.Get("slug"))
	if slug == "" {
		return cp.back(e, dep, ui.FlashError, "Not renamed: type the new slug.")
	}
	if slug == old {
		return cp.back(e, dep, ui.FlashSuccess, "Nothing to change: the site already has that slug.")
	}
	if err := apierr.RateRefusal(e.Response, cp.gate.Keyed.Check(sites.DeploymentOf(dep).OwnerID())); err != nil {
		return cp.refusal(e, dep, "Not renamed: ", err)
	}
	saved, err := cp.deploys.Rename(e.Request.Context(), dep, slug)
	if err != nil {
		return cp.refusal(e, dep, "Not renamed: ", err)
	}
	now := sites.DeploymentOf(saved).Slug()
	until := time.Now().Add(sites.SlugRedirectTTL).UTC().Format(time.DateOnly)
	return cp.back(e, dep, ui.FlashSuccess, "Renamed: the site is now at "+cp.links.Site(now)+
		". "+cp.links.Site(old)+" redirects there until "+until+".")
}

// accountSitePause is POST /account/sites/{id}/pause.
func (cp *controlPages) accountSitePause(e *core.RequestEvent) error {
	return cp.setPaused(e, true)
}

// accountSiteResume is POST /account/sites/{id}/resume.
func (cp *controlPages) accountSiteResume(e *core.RequestEvent) error {
	return cp.setPaused(e, false)
}

// setPaused pauses or resumes the site (sites.Service.SetPaused); a
// repeated post changes nothing and says so.
func (cp *controlPages) setPaused(e *core.RequestEvent, on bool) error {
	dep := ownedOf(e)
	if sites.DeploymentOf(dep).Paused() == on {
		if on {
			return cp.back(e, dep, ui.FlashSuccess, "The site is already paused.")
		}
		return cp.back(e, dep, ui.FlashSuccess, "The site is already running.")
	}
	if err := apierr.RateRefusal(e.Response, cp.gate.Keyed.Check(sites.DeploymentOf(dep).OwnerID())); err != nil {
		return cp.refusal(e, dep, "Not changed: ", err)
	}
	if _, err := cp.deploys.SetPaused(e.Request.Context(), dep, on); err != nil {
		return cp.refusal(e, dep, "Not changed: ", err) // a taken-down site
	}
	if on {
		return cp.back(e, dep, ui.FlashSuccess, `Site paused: visitors see a "paused" page until you resume it.`)
	}
	return cp.back(e, dep, ui.FlashSuccess, "Site resumed: it is served again.")
}
