package pages

import (
	"errors"
	"net/http"

	"github.com/a-h/templ"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/hook"

	"sitedrop/hooks/internal/apierr"
	"sitedrop/sites/domains"
	"sitedrop/ui"
)

// domainPages are the Domains tab and its forms.
type domainPages struct {
	*siteForms
	// start begins a domain action within the account's limit
	// (Services.DomainStart).
	start func(e *core.RequestEvent, owner string, dns bool) (*domains.Allowance, error)
	// domains lists and counts the domains.
	domains *domains.Service
	// siteHost is a site's own host name.
	siteHost func(slug string) string
}

// domainsTab is GET /account/sites/{id}/domains: the site's custom
// domains, the records to create, and the form that adds one.
func (dp *domainPages) domainsTab(e *core.RequestEvent) error {
	d, err := dp.siteDomains(e, userOf(e), ownedOf(e))
	if err != nil {
		return err
	}
	return dp.tab(e, func(lp ui.LayoutProps, h ui.SiteHead) templ.Component { return ui.SiteDomainsTab(lp, h, d) })
}

// siteDomains is the Domains tab's list of dep's custom domains.
func (dp *domainPages) siteDomains(e *core.RequestEvent, user, dep *core.Record) (ui.SiteDomains, error) {
	acct, site := domains.AccountOf(user), domains.SiteOf(dep)
	recs, err := dp.domains.List(site.ID)
	if err != nil {
		return ui.SiteDomains{}, err
	}
	used, err := dp.domains.Used(acct)
	if err != nil {
		return ui.SiteDomains{}, err
	}
	p := ui.SiteDomains{Used: used, Limit: dp.domains.Limit(acct.Plan), Plan: domains.PlanName(acct.Plan),
		SiteHost: dp.siteHost(site.Slug)}
	for _, r := range recs {
		d := ui.SiteDomain{
			Domain: r.Name(), Status: r.Status(), Reason: r.Reason(), URL: dp.links.SiteHost(r.Name()),
			Checked: r.Checked(), Verified: r.Verified(),
		}
		for _, rr := range dp.domains.Records(e.Request.Context(), r, site.Slug) {
			d.Records = append(d.Records, ui.DNSRecord{Type: rr.Type, Name: rr.Name, Value: rr.Value})
		}
		p.Domains = append(p.Domains, d)
	}
	return p, nil
}

// accountDomainCreate is the site page's "Add domain" form: the API's
// rules (domains.Service.Add), checked at once.
func (dp *domainPages) accountDomainCreate(e *core.RequestEvent) error {
	dep := ownedOf(e)
	acct, site := domains.AccountOf(userOf(e)), domains.SiteOf(dep)
	a, err := dp.start(e, acct.ID, true)
	if err != nil {
		return dp.refused(e, dep, ui.PanelDomainAdd, "Domain not added: ", err)
	}
	defer a.Done()
	rec, _, err := dp.domains.Add(e.Request.Context(), acct, site, e.Request.PostForm.Get("domain"), a)
	if err != nil {
		return dp.refused(e, dep, ui.PanelDomainAdd, "Domain not added: ", err)
	}
	return dp.backToSite(e, dep, ui.DomainPanel(rec.Name()), ui.FlashSuccess, domainOutcome(rec, true))
}

// accountDomainVerify is a domain's "Check now" button.
func (dp *domainPages) accountDomainVerify(e *core.RequestEvent) error {
	dep, rec := ownedOf(e), domainOf(e)
	site := domains.SiteOf(dep)
	a, err := dp.start(e, site.OwnerID, true)
	if err != nil {
		return dp.refused(e, dep, ui.DomainPanel(rec.Name()), rec.Name()+" not checked: ", err)
	}
	defer a.Done()
	checked, err := dp.domains.Recheck(e.Request.Context(), rec, site.Slug, a)
	if errors.Is(err, domains.ErrTaken) {
		return dp.backToSite(e, dep, ui.DomainPanel(rec.Name()), ui.FlashError, rec.Name()+": "+err.Error()+".")
	} else if err != nil {
		return err
	}
	kind := ui.FlashSuccess
	if checked.Status() != domains.StatusVerified {
		kind = ui.FlashError
	}
	return dp.backToSite(e, dep, ui.DomainPanel(checked.Name()), kind, domainOutcome(checked, false))
}

// accountDomainDelete is a domain's "Remove" button.
func (dp *domainPages) accountDomainDelete(e *core.RequestEvent) error {
	dep, rec := ownedOf(e), domainOf(e)
	site := domains.SiteOf(dep)
	if _, err := dp.start(e, site.OwnerID, false); err != nil {
		return dp.refused(e, dep, ui.DomainPanel(rec.Name()), rec.Name()+" not removed: ", err)
	}
	if err := dp.domains.Remove(e.Request.Context(), rec); err != nil {
		return err
	}
	return dp.backToSite(e, dep, ui.PanelDomains, ui.FlashSuccess, rec.Name()+" removed: the site no longer answers there.")
}

// requireSiteDomain, after requirePageOwner, leaves the site's custom
// domain named by the path value param on the event (domainOf), and
// answers a 404 page for a domain the site does not have.
func (dp *domainPages) requireSiteDomain(param string) *hook.Handler[*core.RequestEvent] {
	return middleware("sitedropRequireSiteDomain", func(e *core.RequestEvent) error {
		rec, err := dp.domains.Lookup(ownedOf(e).Id, e.Request.PathValue(param))
		if errors.Is(err, domains.ErrNotFound) {
			return dp.sessions.errorPage(e, http.StatusNotFound, "Domain not found", "There is no such domain on this site.")
		} else if err != nil {
			return err
		}
		e.Set(siteDomainKey, rec)
		return e.Next()
	})
}

// siteDomainKey is where requireSiteDomain leaves the domain.
const siteDomainKey = "sitedropSiteDomain"

// domainOf is the domain left on e by requireSiteDomain.
func domainOf(e *core.RequestEvent) *domains.Domain {
	d, _ := e.Get(siteDomainKey).(*domains.Domain)
	return d
}

// domainOutcome is the flash after a domain was added or checked.
func domainOutcome(rec *domains.Domain, added bool) string {
	name := rec.Name()
	switch rec.Status() {
	case domains.StatusVerified:
		return name + " is verified: the site answers there."
	case domains.StatusFailed:
		return name + " failed: " + apierr.Sentence(rec.Reason())
	}
	if added {
		return name + " added. Create the DNS records below; it is checked every few minutes."
	}
	return name + " is not verified yet: " + apierr.Sentence(rec.Reason())
}
