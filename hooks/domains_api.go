package hooks

import (
	"net/http"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites/domains"
)

// bindDomainsAPI registers the custom domain endpoints of deployments
// (owner only, like the rest of /deploy/:id).
func bindDomainsAPI(sd *sitedrop, se *core.ServeEvent, auth *apiAuth) {
	r := se.Router
	r.POST("/deploy/{id}/domains", sd.domainCreate).Bind(auth.requireOwner("id"))                    // claim a domain, check it at once
	r.GET("/deploy/{id}/domains", sd.domainsList).Bind(auth.requireOwner("id"))                      // the deployment's domains and their state
	r.DELETE("/deploy/{id}/domains/{domain}", sd.domainDelete).Bind(auth.requireOwner("id"))         // release a domain
	r.POST("/deploy/{id}/domains/{domain}/verify", sd.domainVerifyNow).Bind(auth.requireOwner("id")) // check now
	r.Any("/deploy/{id}/domains", methodNotAllowed("GET, POST"))
	r.Any("/deploy/{id}/domains/{domain}", methodNotAllowed("DELETE"))
	r.Any("/deploy/{id}/domains/{domain}/verify", methodNotAllowed("POST"))
}

// domainCreate is POST /deploy/:id/domains {"domain"}: 201 with the
// records to create for a new claim, 200 for one the deployment already
// has (checked again).
func (sd *sitedrop) domainCreate(e *core.RequestEvent) error {
	user, dep := userOf(e), ownedOf(e)
	var body struct {
		Domain *string `json:"domain"`
	}
	if err := sd.readJSON(e, authBodyLimit, &body); err != nil {
		return err
	}
	if body.Domain == nil {
		return domains.ErrEmpty
	}
	acct, site := domains.AccountOf(user), domains.SiteOf(dep)
	a, err := sd.startDomainAction(e, acct.ID, true)
	if err != nil {
		return err
	}
	defer a.Done()
	rec, created, err := sd.domainSvc.Add(e.Request.Context(), acct, site, *body.Domain, a)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return e.JSON(status, sd.domainAnswer(e, rec, site.Slug))
}

// domainsList is GET /deploy/:id/domains.
func (sd *sitedrop) domainsList(e *core.RequestEvent) error {
	dep := ownedOf(e)
	site := domains.SiteOf(dep)
	recs, err := sd.domainSvc.List(site.ID)
	if err != nil {
		return err
	}
	out := make([]domainJSON, 0, len(recs))
	for _, r := range recs {
		out = append(out, sd.domainAnswer(e, r, site.Slug))
	}
	return e.JSON(http.StatusOK, map[string]any{"domains": out})
}

// domainDelete is DELETE /deploy/:id/domains/:domain.
func (sd *sitedrop) domainDelete(e *core.RequestEvent) error {
	site, rec, err := sd.ownedDomain(e)
	if err != nil {
		return err
	}
	if _, err := sd.startDomainAction(e, site.OwnerID, false); err != nil {
		return err
	}
	if err := sd.domainSvc.Remove(rec); err != nil {
		return err
	}
	return e.JSON(http.StatusOK, map[string]string{
		"domain":  rec.Name(),
		"message": "Domain " + rec.Name() + " removed from " + site.Slug,
	})
}

// domainVerifyNow is POST /deploy/:id/domains/:domain/verify: the check,
// now (a failed claim starts again).
func (sd *sitedrop) domainVerifyNow(e *core.RequestEvent) error {
	site, rec, err := sd.ownedDomain(e)
	if err != nil {
		return err
	}
	a, err := sd.startDomainAction(e, site.OwnerID, true)
	if err != nil {
		return err
	}
	defer a.Done()
	if rec, err = sd.domainSvc.Recheck(e.Request.Context(), rec, site.Slug, a); err != nil {
		return err
	}
	return e.JSON(http.StatusOK, sd.domainAnswer(e, rec, site.Slug))
}

// ownedDomain finds the caller's deployment and its domain named in the
// path: 404 when either is not there.
func (sd *sitedrop) ownedDomain(e *core.RequestEvent) (domains.Site, *domains.Domain, error) {
	dep := ownedOf(e)
	site := domains.SiteOf(dep)
	rec, err := sd.domainSvc.Lookup(site.ID, e.Request.PathValue("domain"))
	if err != nil {
		return domains.Site{}, nil, err
	}
	return site, rec, nil
}
