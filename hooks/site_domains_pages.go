package hooks

import (
	"errors"
	"net/http"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites/domains"
	"sitedrop/ui"
)

// bindSiteDomainsPages registers the custom domain forms of the site page
// (each POST → 303 → GET with a flash).
func bindSiteDomainsPages(sd *sitedrop, se *core.ServeEvent) {
	r := se.Router
	r.POST("/account/sites/{id}/domains", sd.accountDomainCreate)
	r.POST("/account/sites/{id}/domains/{domain}/verify", sd.accountDomainVerify)
	r.POST("/account/sites/{id}/domains/{domain}/delete", sd.accountDomainDelete)
}

// siteDomains is the site page's custom domains panel of dep.
func (sd *sitedrop) siteDomains(e *core.RequestEvent, user, dep *core.Record) (ui.SiteDomains, error) {
	recs, err := domains.List(e.App, dep.Id)
	if err != nil {
		return ui.SiteDomains{}, err
	}
	used, err := domains.CountOwned(e.App, user.Id)
	if err != nil {
		return ui.SiteDomains{}, err
	}
	plan := user.GetString("plan")
	slug := dep.GetString("slug")
	p := ui.SiteDomains{Used: used, Limit: sd.domainLimit(plan), Plan: planName(plan), SiteHost: sd.siteHost(slug)}
	for _, r := range recs {
		j := sd.domainAnswer(e.Request.Context(), r, slug)
		d := ui.SiteDomain{
			Domain: j.Domain, Status: j.Status, Reason: j.Reason, URL: j.URL,
			Checked: r.GetDateTime("checked").Time(), Verified: r.GetDateTime("verified").Time(),
		}
		for _, rr := range j.Records {
			d.Records = append(d.Records, ui.DNSRecord{Type: rr.Type, Name: rr.Name, Value: rr.Value})
		}
		p.Domains = append(p.Domains, d)
	}
	return p, nil
}

// accountDomainCreate is the site page's "Add domain" form: the API's
// rules (sd.addDomain), checked at once.
func (sd *sitedrop) accountDomainCreate(e *core.RequestEvent) error {
	dep, err := sd.formSite(e)
	if dep == nil {
		return err
	}
	user := sd.sessionUser(e)
	var ae *apiError
	a, err := sd.startDomainAction(e, user.Id, true)
	if errors.As(err, &ae) {
		return sd.backToSite(e, dep, ui.FlashError, "Domain not added: "+sentence(ae.Message))
	} else if err != nil {
		return err
	}
	defer a.done()
	rec, _, err := sd.addDomain(e.Request.Context(), user, dep, e.Request.PostForm.Get("domain"), a)
	if errors.As(err, &ae) {
		return sd.backToSite(e, dep, ui.FlashError, "Domain not added: "+sentence(ae.Message))
	} else if err != nil {
		return err
	}
	return sd.backToSite(e, dep, ui.FlashSuccess, domainOutcome(rec, true))
}

// accountDomainVerify is a domain's "Check now" button.
func (sd *sitedrop) accountDomainVerify(e *core.RequestEvent) error {
	dep, rec, err := sd.formDomain(e)
	if rec == nil {
		return err
	}
	a, err := sd.startDomainAction(e, dep.GetString("owner"), true)
	var ae *apiError
	if errors.As(err, &ae) {
		return sd.backToSite(e, dep, ui.FlashError, rec.GetString("domain")+" not checked: "+sentence(ae.Message))
	} else if err != nil {
		return err
	}
	defer a.done()
	checked, err := sd.recheckDomain(e.Request.Context(), e.App, rec, dep.GetString("slug"), a)
	if errors.Is(err, domains.ErrTaken) {
		return sd.backToSite(e, dep, ui.FlashError, rec.GetString("domain")+": "+err.Error()+".")
	} else if err != nil {
		return err
	}
	kind := ui.FlashSuccess
	if checked.GetString("status") != domains.StatusVerified {
		kind = ui.FlashError
	}
	return sd.backToSite(e, dep, kind, domainOutcome(checked, false))
}

// accountDomainDelete is a domain's "Remove" button.
func (sd *sitedrop) accountDomainDelete(e *core.RequestEvent) error {
	dep, rec, err := sd.formDomain(e)
	if rec == nil {
		return err
	}
	var ae *apiError
	if _, err := sd.startDomainAction(e, dep.GetString("owner"), false); errors.As(err, &ae) {
		return sd.backToSite(e, dep, ui.FlashError, rec.GetString("domain")+" not removed: "+sentence(ae.Message))
	} else if err != nil {
		return err
	}
	if err := e.App.Delete(rec); err != nil {
		return err
	}
	return sd.backToSite(e, dep, ui.FlashSuccess, rec.GetString("domain")+" removed: the site no longer answers there.")
}

// formDomain checks a form post about domain {domain} of the user's site
// {id}; with a nil domain the answer is decided (404 page for a domain the
// site does not have).
func (sd *sitedrop) formDomain(e *core.RequestEvent) (dep, rec *core.Record, err error) {
	dep, err = sd.formSite(e)
	if dep == nil {
		return nil, nil, err
	}
	if rec, err = findDomain(e.App, dep.Id, e.Request.PathValue("domain")); err != nil {
		return nil, nil, sd.errorPage(e, http.StatusNotFound, "Domain not found", "There is no such domain on this site.")
	}
	return dep, rec, nil
}

// domainOutcome is the flash after a domain was added or checked.
func domainOutcome(rec *core.Record, added bool) string {
	name := rec.GetString("domain")
	switch rec.GetString("status") {
	case domains.StatusVerified:
		return name + " is verified: the site answers there."
	case domains.StatusFailed:
		return name + " failed: " + sentence(rec.GetString("reason"))
	}
	if added {
		return name + " added. Create the DNS records below; it is checked every few minutes."
	}
	return name + " is not verified yet: " + sentence(rec.GetString("reason"))
}
