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
	acct, site := domains.AccountOf(user), domains.SiteOf(dep)
	recs, err := sd.domainSvc.List(site.ID)
	if err != nil {
		return ui.SiteDomains{}, err
	}
	used, err := sd.domainSvc.Used(acct)
	if err != nil {
		return ui.SiteDomains{}, err
	}
	p := ui.SiteDomains{Used: used, Limit: sd.domainSvc.Limit(acct.Plan), Plan: domains.PlanName(acct.Plan),
		SiteHost: sd.siteHost(site.Slug)}
	for _, r := range recs {
		j := sd.domainDesk.answer(e, r, site.Slug)
		d := ui.SiteDomain{
			Domain: j.Domain, Status: j.Status, Reason: j.Reason, URL: j.URL,
			Checked: r.Checked(), Verified: r.Verified(),
		}
		for _, rr := range j.Records {
			d.Records = append(d.Records, ui.DNSRecord{Type: rr.Type, Name: rr.Name, Value: rr.Value})
		}
		p.Domains = append(p.Domains, d)
	}
	return p, nil
}

// accountDomainCreate is the site page's "Add domain" form: the API's
// rules (domains.Service.Add), checked at once.
func (sd *sitedrop) accountDomainCreate(e *core.RequestEvent) error {
	dep, err := sd.formSite(e)
	if dep == nil {
		return err
	}
	acct, site := domains.AccountOf(sd.sessions.user(e)), domains.SiteOf(dep)
	a, err := sd.domainDesk.start(e, acct.ID, true)
	if ae, ok := domainRefusal(err); ok {
		return sd.backToSite(e, dep, ui.FlashError, "Domain not added: "+sentence(ae.Message))
	} else if err != nil {
		return err
	}
	defer a.Done()
	rec, _, err := sd.domainSvc.Add(e.Request.Context(), acct, site, e.Request.PostForm.Get("domain"), a)
	if ae, ok := domainRefusal(err); ok {
		return sd.backToSite(e, dep, ui.FlashError, "Domain not added: "+sentence(ae.Message))
	} else if err != nil {
		return err
	}
	return sd.backToSite(e, dep, ui.FlashSuccess, domainOutcome(rec, true))
}

// accountDomainVerify is a domain's "Check now" button.
func (sd *sitedrop) accountDomainVerify(e *core.RequestEvent) error {
	dep, site, rec, err := sd.formDomain(e)
	if rec == nil {
		return err
	}
	a, err := sd.domainDesk.start(e, site.OwnerID, true)
	if ae, ok := domainRefusal(err); ok {
		return sd.backToSite(e, dep, ui.FlashError, rec.Name()+" not checked: "+sentence(ae.Message))
	} else if err != nil {
		return err
	}
	defer a.Done()
	checked, err := sd.domainSvc.Recheck(e.Request.Context(), rec, site.Slug, a)
	if errors.Is(err, domains.ErrTaken) {
		return sd.backToSite(e, dep, ui.FlashError, rec.Name()+": "+err.Error()+".")
	} else if err != nil {
		return err
	}
	kind := ui.FlashSuccess
	if checked.Status() != domains.StatusVerified {
		kind = ui.FlashError
	}
	return sd.backToSite(e, dep, kind, domainOutcome(checked, false))
}

// accountDomainDelete is a domain's "Remove" button.
func (sd *sitedrop) accountDomainDelete(e *core.RequestEvent) error {
	dep, site, rec, err := sd.formDomain(e)
	if rec == nil {
		return err
	}
	if _, err := sd.domainDesk.start(e, site.OwnerID, false); err != nil {
		if ae, ok := domainRefusal(err); ok {
			return sd.backToSite(e, dep, ui.FlashError, rec.Name()+" not removed: "+sentence(ae.Message))
		}
		return err
	}
	if err := sd.domainSvc.Remove(rec); err != nil {
		return err
	}
	return sd.backToSite(e, dep, ui.FlashSuccess, rec.Name()+" removed: the site no longer answers there.")
}

// formDomain checks a form post about domain {domain} of the user's site
// {id}; with a nil domain the answer is decided (404 page for a domain the
// site does not have).
func (sd *sitedrop) formDomain(e *core.RequestEvent) (*core.Record, domains.Site, *domains.Domain, error) {
	dep, err := sd.formSite(e)
	if dep == nil {
		return nil, domains.Site{}, nil, err
	}
	site := domains.SiteOf(dep)
	rec, err := sd.domainSvc.Lookup(site.ID, e.Request.PathValue("domain"))
	if errors.Is(err, domains.ErrNotFound) {
		return nil, site, nil, sd.sessions.errorPage(e, http.StatusNotFound, "Domain not found", "There is no such domain on this site.")
	} else if err != nil {
		return nil, site, nil, err
	}
	return dep, site, rec, nil
}

// domainOutcome is the flash after a domain was added or checked.
func domainOutcome(rec *domains.Domain, added bool) string {
	name := rec.Name()
	switch rec.Status() {
	case domains.StatusVerified:
		return name + " is verified: the site answers there."
	case domains.StatusFailed:
		return name + " failed: " + sentence(rec.Reason())
	}
	if added {
		return name + " added. Create the DNS records below; it is checked every few minutes."
	}
	return name + " is not verified yet: " + sentence(rec.Reason())
}
