package hooks

import (
	"context"
	"net/http"

	"github.com/pocketbase/pocketbase/apis"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/router"

	"sitedrop/hooks/internal/apierr"
	"sitedrop/hooks/server"
	"sitedrop/sites"
	"sitedrop/sites/intake"
	"sitedrop/sites/report"
	"sitedrop/sites/wire"
)

// claimBodyLimit bounds the small JSON body of a claim.
const claimBodyLimit = 64 << 10

// The refusals of a draft that would change the live site's protection.
const (
	msgDraftPassword = "password cannot be set by a draft: the protection is the live site's; change it with a deploy that is not a draft"
	msgDraftProtect  = "protect cannot be set by a draft: the protection is the live site's; change it with a deploy that is not a draft"
)

// deployAPI serves the deploy endpoints (and the versions ones, which
// act on the same deployments). It holds exactly the services they use,
// built before it is: bindDeployAPI is handed a finished value.
type deployAPI struct {
	// settings hold the anonymous deploys' rules in force: on or off,
	// their TTL, and whether their sites wait for a claim to be served.
	settings *sites.InstanceSettings
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
	p := sites.CreateParams{Owner: user}
	if user == nil {
		// the rules of this request, read once (a change applies to the next)
		anon := api.settings.Anon()
		if !anon.Enabled {
			return sites.ErrAnonDeploysOff
		}
		p.AnonTTL, p.HoldUntilClaimed = anon.TTL, anon.HoldUntilClaimed
		err = gate.Anon.Check(api.proxies.RateKey(e.Request))
	} else {
		err = gate.Keyed.Check(user.Id)
	}
	if err != nil {
		return err
	}
	lease := guards.MemoryLease(e.Request.Context())
	defer lease.End()
	// the slug and the slots before the content: a refused deploy is
	// refused before its files are decoded, looked up or unpacked
	req, release, err := api.intake.Read(e.Response, e.Request, lease, user == nil, func(req *intake.Request) error {
		if _, err := req.Release(user == nil); err != nil {
			return err // an anonymous draft or alias, before its files are read
		}
		if req.Slug != nil {
			// a slug that is sent must be valid; "" does not mean "generate"
			if err := sites.ValidateSlug(*req.Slug); err != nil {
				return err
			}
			p.Slug = *req.Slug
		}
		if err := api.deploys.PrecheckCreate(user, p.Slug); err != nil {
			return err
		}
		p.Prechecked = true // Create need not ask again
		return nil
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
	c, err := api.intake.Content(work, req, load, lease, sites.RuleLimitOf(user), user == nil)
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
	ans := api.answer(work.Ctx, created.Record, created.Version, c)
	if user == nil {
		dep := sites.DeploymentOf(created.Record)
		ans.Claim = &wire.Claim{
			ClaimToken:    created.ClaimToken,
			ClaimURL:      api.links.Claim(dep.Slug(), created.ClaimToken),
			ExpiresAt:     timestamp(dep.ExpiresAt()),
			AwaitingClaim: dep.AwaitingClaim(),
		}
	}
	return e.JSON(http.StatusOK, ans)
}

// answer is the answer of a deploy or an update of rec (as saved) that
// made the version ver with c, its report made within ctx (the deploy's
// work budget) of the files as the deploy received them. A draft's
// report speaks of the draft (its SPA setting, its title).
func (api *deployAPI) answer(ctx context.Context, rec, ver *core.Record, c intake.Content) wire.DeployAnswer {
	dep := sites.DeploymentOf(rec)
	slug, n := dep.Slug(), sites.VersionOf(ver).Number()
	title := dep.Title()
	if c.Meta.Title != nil {
		title = *c.Meta.Title
	}
	ans := wire.DeployAnswer{
		DeployRef:  wire.DeployRef{ID: rec.Id, Slug: slug, URL: api.links.Site(slug)},
		ShareURL:   api.links.Share(rec),
		Version:    n,
		Draft:      ver.Id != dep.LiveVersion(),
		PreviewURL: api.links.Preview(slug, n),
		Warnings:   c.Warnings,
		Report: report.ForDeploy(ctx, report.Input{
			Files:     c.Upload.Files,
			Redirects: c.Redirects,
			IsSPA:     sites.VersionOf(ver).IsSPA(),
			Title:     title,
			Warnings:  c.Warnings,
		}),
	}
	if alias := c.Upload.Release.Alias; alias != "" {
		ans.AliasURL = api.links.Alias(slug, alias)
	}
	return ans
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
	var live int // 0: none live (a deployment created as a draft)
	if v, err := sites.FindVersionHead(e.App, rec.Id, dep.LiveVersion()); err == nil {
		live = sites.VersionOf(v).Number()
	}
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
		Paused:      dep.Paused(),
		TakenDown:   dep.TakedownReason(),
		CreatedAt:   timestamp(dep.Created()),
		UpdatedAt:   timestamp(dep.Updated()),
		Version:     live,
		PreviewURL:  api.links.Preview(slug, live),
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
			return apierr.Fail(http.StatusBadRequest, msgSlugImmutable)
		}
		rel, err := req.Release(false)
		if err != nil {
			return err
		}
		// the protection is the site's, live now: a draft changes content only
		if rel.Draft && req.Password.Set {
			return apierr.Fail(http.StatusBadRequest, msgDraftPassword)
		}
		if rel.Draft && req.Protect.Set {
			return apierr.Fail(http.StatusBadRequest, msgDraftProtect)
		}
		return nil
	})
	if err != nil {
		return err
	}
	defer release()
	work := guards.StartWork(e.Request.Context(), false)
	defer work.End()
	c, err := api.intake.Content(work, req, api.intake.StoredContent(e.Request.Context(), api.deploys.Store(), lease), lease, sites.RuleLimitOf(user), false)
	if err != nil {
		return err
	}
	rec, ver, err := api.deploys.ReplaceVersion(work.Ctx, rec, c.Meta, c.Upload)
	if err != nil {
		api.gc.MarkDue() // blobs may have been written before the failure
		return work.Over(err)
	}
	return e.JSON(http.StatusOK, api.answer(work.Ctx, rec, ver, c))
}

// delete is DELETE /deploy/:id.
func (api *deployAPI) delete(e *core.RequestEvent) error {
	rec := ownedOf(e)
	if err := api.deploys.Delete(e.Request.Context(), rec); err != nil {
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
		return apierr.Fail(http.StatusBadRequest, "slug is required")
	}
	if req.ClaimToken == nil || *req.ClaimToken == "" {
		return apierr.Fail(http.StatusBadRequest, "claim_token is required")
	}
	rec, err := api.deploys.Claim(e.Request.Context(), userOf(e), *req.Slug, *req.ClaimToken)
	if err != nil {
		return err
	}
	slug := sites.DeploymentOf(rec).Slug()
	return e.JSON(http.StatusOK, wire.DeployRef{ID: rec.Id, Slug: slug, URL: api.links.Site(slug)})
}
