package hooks

import (
	"context"
	"net/http"
	"time"

	"github.com/pocketbase/pocketbase/apis"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/router"

	"sitedrop/hooks/server"
	"sitedrop/sites"
	"sitedrop/sites/intake"
	"sitedrop/sites/report"
	"sitedrop/sites/wire"
)

// claimBodyLimit bounds the small JSON body of a claim.
const claimBodyLimit = 64 << 10

// deployAPI serves the deploy endpoints (and the versions ones, which
// act on the same deployments). It holds exactly the services they use,
// built before it is: bindDeployAPI is handed a finished value.
type deployAPI struct {
	// anonTTL is --anon-ttl: how long an anonymous deployment lives.
	anonTTL time.Duration
	// links are the URLs of the answers.
	links sites.Links
	// deploys creates, replaces, finds and deletes deployments.
	deploys *sites.Service
	// intake reads the deploy requests and holds the deploy gate (rate
	// limits and processing slots).
	intake *intake.Deploys
	// proxies give the rate key of an anonymous client.
	proxies server.TrustedProxies
	// gc is set when a failed deploy may have left unreferenced blobs.
	gc *sites.Upkeep
}

// bindDeployAPI registers the deploy endpoints of the contract on r, each
// behind the auth it needs (auth).
func bindDeployAPI(r *router.Router[*core.RequestEvent], api *deployAPI, auth *apiAuth) {
	// deploy bodies are bounded by --max-body in intake.Deploys.Read, with a message
	// that names the limit, instead of PocketBase's 32 MiB default.
	r.POST("/deploy", api.create).Bind(auth.loadUser()).Unbind(apis.DefaultBodyLimitMiddlewareId)             // create, keyed or anonymous
	r.POST("/deploy/claim", api.claim).Bind(auth.requireUser())                                               // claim an anonymous deployment
	r.GET("/deploy/{id}", api.view).Bind(auth.requireOwner("id"))                                             // metadata
	r.PUT("/deploy/{id}", api.update).Bind(auth.requireOwner("id")).Unbind(apis.DefaultBodyLimitMiddlewareId) // replace content
	r.DELETE("/deploy/{id}", api.delete).Bind(auth.requireOwner("id"))                                        // delete
	r.GET("/deploys", api.list).Bind(auth.requireUser())                                                      // the caller's deployments
	r.Any("/deploy", methodNotAllowed("POST"))
	r.Any("/deploy/{id}", func(e *core.RequestEvent) error {
		if e.Request.PathValue("id") == "claim" {
			return methodNotAllowed("POST")(e)
		}
		return methodNotAllowed("GET, PUT, DELETE")(e)
	})
	r.Any("/deploys", methodNotAllowed("GET"))
}

// create is POST /deploy.
func (api *deployAPI) create(e *core.RequestEvent) error {
	user := userOf(e)
	gate, guards := api.intake.Gate, api.intake.Guards
	var err error
	if user == nil {
		err = gate.Anon.Check(api.proxies.RateKey(e.Request))
	} else {
		err = gate.Keyed.Check(user.Id)
	}
	if err != nil {
		return err
	}
	p := sites.CreateParams{Owner: user, AnonTTL: api.anonTTL}
	lease := guards.MemoryLease(e.Request.Context())
	defer lease.End()
	// the slug and the slots before the content: a refused deploy is
	// refused before its files are decoded, looked up or unpacked
	req, release, err := api.intake.Read(e.Response, e.Request, lease, user == nil, func(req *intake.Request) error {
		if req.Slug != nil {
			// a slug that is sent must be valid; "" does not mean "generate"
			if err := sites.ValidateSlug(*req.Slug); err != nil {
				return err
			}
			p.Slug = *req.Slug
		}
		return api.deploys.PrecheckCreate(user, p.Slug)
	})
	if err != nil {
		return err
	}
	defer release()
	work := guards.StartWork(e.Request.Context(), user == nil)
	defer work.End()
	var load sites.BlobLoader // anonymous deploys send their bytes
	if user != nil {
		load = api.intake.StoredContent(e.Request.Context(), api.deploys.Store(), lease)
	}
	c, err := api.intake.Content(work, req, load, lease, sites.RuleLimitOf(user))
	if err != nil {
		return err
	}
	p.Meta, p.Upload = c.Meta, c.Upload
	refund := func() {}
	if user == nil {
		if refund, err = api.intake.ChargeAnonStorage(api.proxies.RateKey(e.Request), p.Upload); err != nil {
			return err
		}
	}
	created, err := api.deploys.Create(work.Ctx, p)
	if err != nil {
		refund()
		api.gc.MarkDue() // blobs may have been written before the failure
		return work.Over(err)
	}
	ans := api.answer(work.Ctx, created.Record, c)
	if user == nil {
		dep := sites.DeploymentOf(created.Record)
		ans.Claim = &wire.Claim{
			ClaimToken: created.ClaimToken,
			ClaimURL:   api.links.Claim(dep.Slug(), created.ClaimToken),
			ExpiresAt:  timestamp(dep.ExpiresAt()),
		}
	}
	return e.JSON(http.StatusOK, ans)
}

// answer is the answer of a deploy or an update of rec (as saved) with
// c, its report made within ctx (the deploy's work budget) of the files
// as the deploy received them.
func (api *deployAPI) answer(ctx context.Context, rec *core.Record, c intake.Content) wire.DeployAnswer {
	dep := sites.DeploymentOf(rec)
	return wire.DeployAnswer{
		DeployRef: wire.DeployRef{ID: rec.Id, Slug: dep.Slug(), URL: api.links.Site(dep.Slug())},
		ShareURL:  api.links.Share(rec),
		Warnings:  c.Warnings,
		Report: report.ForDeploy(ctx, report.Input{
			Files:     c.Upload.Files,
			Redirects: c.Redirects,
			IsSPA:     dep.IsSPA(),
			Title:     dep.Title(),
			Warnings:  c.Warnings,
		}),
	}
}

// view is GET /deploy/:id.
func (api *deployAPI) view(e *core.RequestEvent) error {
	rec := ownedOf(e)
	dep := sites.DeploymentOf(rec)
	var desc *string
	if d := dep.Description(); d != "" {
		desc = &d
	}
	slug := dep.Slug()
	return e.JSON(http.StatusOK, wire.DeployStatus{
		ID:          rec.Id,
		Slug:        slug,
		URL:         api.links.Site(slug),
		Status:      dep.Status(),
		StorageType: dep.StorageType(),
		IsSPA:       dep.IsSPA(),
		Title:       dep.Title(),
		Description: desc,
		Favicon:     dep.Favicon(),
		Protected:   dep.Protection() != nil,
		CreatedAt:   timestamp(dep.Created()),
		UpdatedAt:   timestamp(dep.Updated()),
	})
}

// update is PUT /deploy/:id.
func (api *deployAPI) update(e *core.RequestEvent) error {
	user, rec := userOf(e), ownedOf(e)
	guards := api.intake.Guards
	if err := api.intake.Gate.Keyed.Check(sites.DeploymentOf(rec).OwnerID()); err != nil {
		return err
	}
	lease := guards.MemoryLease(e.Request.Context())
	defer lease.End()
	req, release, err := api.intake.Read(e.Response, e.Request, lease, false, func(req *intake.Request) error {
		if req.Slug != nil {
			return fail(http.StatusBadRequest, msgSlugImmutable)
		}
		return nil
	})
	if err != nil {
		return err
	}
	defer release()
	work := guards.StartWork(e.Request.Context(), false)
	defer work.End()
	c, err := api.intake.Content(work, req, api.intake.StoredContent(e.Request.Context(), api.deploys.Store(), lease), lease, sites.RuleLimitOf(user))
	if err != nil {
		return err
	}
	rec, err = api.deploys.Replace(work.Ctx, rec, c.Meta, c.Upload)
	if err != nil {
		api.gc.MarkDue() // blobs may have been written before the failure
		return work.Over(err)
	}
	return e.JSON(http.StatusOK, api.answer(work.Ctx, rec, c))
}

// delete is DELETE /deploy/:id.
func (api *deployAPI) delete(e *core.RequestEvent) error {
	rec := ownedOf(e)
	if err := api.deploys.Delete(rec); err != nil {
		return err
	}
	return e.JSON(http.StatusOK, wire.IDMessage{
		ID:      rec.Id,
		Message: "Deployment " + sites.DeploymentOf(rec).Slug() + " deleted",
	})
}

// list is GET /deploys.
func (api *deployAPI) list(e *core.RequestEvent) error {
	recs, err := api.deploys.ListOwned(userOf(e))
	if err != nil {
		return err
	}
	out := make([]wire.DeploySummary, 0, len(recs))
	for _, rec := range recs {
		dep := sites.DeploymentOf(rec)
		slug := dep.Slug()
		out = append(out, wire.DeploySummary{
			ID:        rec.Id,
			Slug:      slug,
			URL:       api.links.Site(slug),
			Title:     dep.Title(),
			UpdatedAt: timestamp(dep.Updated()),
		})
	}
	return e.JSON(http.StatusOK, wire.DeploymentList{Deployments: out})
}

// claim is POST /deploy/claim.
func (api *deployAPI) claim(e *core.RequestEvent) error {
	var req wire.ClaimRequest
	if err := api.intake.Guards.ReadJSON(e.Response, e.Request, claimBodyLimit, &req); err != nil {
		return err
	}
	if req.Slug == nil || *req.Slug == "" {
		return fail(http.StatusBadRequest, "slug is required")
	}
	if req.ClaimToken == nil || *req.ClaimToken == "" {
		return fail(http.StatusBadRequest, "claim_token is required")
	}
	rec, err := api.deploys.Claim(userOf(e), *req.Slug, *req.ClaimToken)
	if err != nil {
		return err
	}
	slug := sites.DeploymentOf(rec).Slug()
	return e.JSON(http.StatusOK, wire.DeployRef{ID: rec.Id, Slug: slug, URL: api.links.Site(slug)})
}

// timestamp formats t as RFC 3339 in UTC with a Z.
func timestamp(t time.Time) string {
	return t.UTC().Format(time.RFC3339)
}
