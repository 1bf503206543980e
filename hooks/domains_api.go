package hooks

import (
	"net/http"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/router"

	"sitedrop/sites/domains"
	"sitedrop/sites/intake"
)

// domainsAPI serves the custom domain endpoints with exactly the
// services they use.
type domainsAPI struct {
	// desk runs the actions within the account's limits.
	desk *domainDesk
	// guards read the bodies within the memory budget and at a minimum rate.
	guards *intake.Guards
}

// bindDomainsAPI registers the custom domain endpoints of deployments
// (owner only, like the rest of /deploy/:id).
func bindDomainsAPI(r *router.Router[*core.RequestEvent], api *domainsAPI, auth *apiAuth) {
	r.POST("/deploy/{id}/domains", api.create).Bind(auth.requireOwner("id"))                    // claim a domain, check it at once
	r.GET("/deploy/{id}/domains", api.list).Bind(auth.requireOwner("id"))                       // the deployment's domains and their state
	r.DELETE("/deploy/{id}/domains/{domain}", api.delete).Bind(auth.requireOwner("id"))         // release a domain
	r.POST("/deploy/{id}/domains/{domain}/verify", api.verifyNow).Bind(auth.requireOwner("id")) // check now
	r.Any("/deploy/{id}/domains", methodNotAllowed("GET, POST"))
	r.Any("/deploy/{id}/domains/{domain}", methodNotAllowed("DELETE"))
	r.Any("/deploy/{id}/domains/{domain}/verify", methodNotAllowed("POST"))
}

// create is POST /deploy/:id/domains {"domain"}: 201 with the
// records to create for a new claim, 200 for one the deployment already
// has (checked again).
func (api *domainsAPI) create(e *core.RequestEvent) error {
	user, dep := userOf(e), ownedOf(e)
	var body struct {
		Domain *string `json:"domain"`
	}
	if err := api.guards.ReadJSON(e.Response, e.Request, authBodyLimit, &body); err != nil {
		return err
	}
	if body.Domain == nil {
		return domains.ErrEmpty
	}
	acct, site := domains.AccountOf(user), domains.SiteOf(dep)
	a, err := api.desk.start(e, acct.ID, true)
	if err != nil {
		return err
	}
	defer a.Done()
	rec, created, err := api.desk.svc.Add(e.Request.Context(), acct, site, *body.Domain, a)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return e.JSON(status, api.desk.answer(e, rec, site.Slug))
}

// list is GET /deploy/:id/domains.
func (api *domainsAPI) list(e *core.RequestEvent) error {
	dep := ownedOf(e)
	site := domains.SiteOf(dep)
	recs, err := api.desk.svc.List(site.ID)
	if err != nil {
		return err
	}
	out := make([]domainJSON, 0, len(recs))
	for _, r := range recs {
		out = append(out, api.desk.answer(e, r, site.Slug))
	}
	return e.JSON(http.StatusOK, map[string]any{"domains": out})
}

// delete is DELETE /deploy/:id/domains/:domain.
func (api *domainsAPI) delete(e *core.RequestEvent) error {
	site, rec, err := api.ownedDomain(e)
	if err != nil {
		return err
	}
	if _, err := api.desk.start(e, site.OwnerID, false); err != nil {
		return err
	}
	if err := api.desk.svc.Remove(e.Request.Context(), rec); err != nil {
		return err
	}
	return e.JSON(http.StatusOK, map[string]string{
		"domain":  rec.Name(),
		"message": "Domain " + rec.Name() + " removed from " + site.Slug,
	})
}

// verifyNow is POST /deploy/:id/domains/:domain/verify: the check,
// now (a failed claim starts again).
func (api *domainsAPI) verifyNow(e *core.RequestEvent) error {
	site, rec, err := api.ownedDomain(e)
	if err != nil {
		return err
	}
	a, err := api.desk.start(e, site.OwnerID, true)
	if err != nil {
		return err
	}
	defer a.Done()
	if rec, err = api.desk.svc.Recheck(e.Request.Context(), rec, site.Slug, a); err != nil {
		return err
	}
	return e.JSON(http.StatusOK, api.desk.answer(e, rec, site.Slug))
}

// ownedDomain finds the caller's deployment and its domain named in the
// path: 404 when either is not there.
func (api *domainsAPI) ownedDomain(e *core.RequestEvent) (domains.Site, *domains.Domain, error) {
	dep := ownedOf(e)
	site := domains.SiteOf(dep)
	rec, err := api.desk.svc.Lookup(site.ID, e.Request.PathValue("domain"))
	if err != nil {
		return domains.Site{}, nil, err
	}
	return site, rec, nil
}
