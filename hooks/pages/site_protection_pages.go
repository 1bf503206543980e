package pages

import (
	"github.com/pocketbase/pocketbase/core"

	"sitedrop/hooks/internal/apierr"
	"sitedrop/sites"
	"sitedrop/ui"
)

// protectionPages are the Settings tab's protection forms.
type protectionPages struct {
	*siteForms
}

// siteProtection is what the site page shows of dep's protection.
func siteProtection(links sites.Links, dep *core.Record) ui.SiteProtection {
	p := sites.ProtectionOf(dep)
	if p == nil {
		return ui.SiteProtection{}
	}
	return ui.SiteProtection{Password: p.PasswordHash != "", ShareURL: links.Share(dep)}
}

// accountSiteProtection is POST /account/sites/{id}/protection: the site
// page's protection forms, told apart by their button's action:
// password (with the password field), remove-password, link-on,
// link-off, rotate. Each change goes through the service as an API deploy's
// would, and answers 303 to the Settings tab's protection with what
// happened.
func (pp *protectionPages) accountSiteProtection(e *core.RequestEvent) error {
	dep := ownedOf(e)
	var c sites.ProtectionChange
	var done string
	on, off, none := true, false, ""
	switch e.Request.PostForm.Get("action") {
	case "password":
		h, err := sites.HashPassword(e.Request.PostForm.Get("password"))
		if err != nil {
			return pp.backToSite(e, dep, ui.PanelProtection, ui.FlashError, "Password not set: "+apierr.Sentence(err.Error()))
		}
		c.PasswordHash = &h
		done = "Password set: visitors must type it; everyone who was in must type it again."
	case "remove-password":
		c.PasswordHash = &none
		done = "Password removed."
	case "link-on":
		c.Link = &on
		done = "Share link on: copy it below."
	case "link-off":
		c.Link = &off
		done = "Share link off: it no longer lets anyone in."
	case "rotate":
		c.Rotate = true
		done = "New share link made: the old one no longer works, and everyone who was in must enter again."
	default:
		return pp.backToSite(e, dep, ui.PanelProtection, ui.FlashError, "Nothing changed: unknown action.")
	}
	out, err := pp.deploys.SetProtection(e.Request.Context(), dep, c)
	if err != nil {
		return err
	}
	if sites.ProtectionOf(out) == nil {
		done += " The site is public now."
	}
	return pp.backToSite(e, dep, ui.PanelProtection, ui.FlashSuccess, done)
}
