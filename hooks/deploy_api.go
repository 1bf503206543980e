package hooks

import (
	"bufio"
	"net/http"
	"time"

	"github.com/pocketbase/pocketbase/apis"
	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
	"sitedrop/sites/wire"
)

// claimBodyLimit bounds the small JSON body of a claim.
const claimBodyLimit = 64 << 10

// bindDeployAPI registers the deploy endpoints of the contract.
func bindDeployAPI(sd *sitedrop, se *core.ServeEvent, auth *apiAuth) {
	r := se.Router
	// deploy bodies are bounded by --max-body in guardBody, with a message
	// that names the limit, instead of PocketBase's 32 MiB default.
	r.POST("/deploy", sd.deployCreate).Bind(auth.loadUser()).Unbind(apis.DefaultBodyLimitMiddlewareId)             // create, keyed or anonymous
	r.POST("/deploy/claim", sd.deployClaim).Bind(auth.requireUser())                                               // claim an anonymous deployment
	r.GET("/deploy/{id}", sd.deployView).Bind(auth.requireOwner("id"))                                             // metadata
	r.PUT("/deploy/{id}", sd.deployUpdate).Bind(auth.requireOwner("id")).Unbind(apis.DefaultBodyLimitMiddlewareId) // replace content
	r.DELETE("/deploy/{id}", sd.deployDelete).Bind(auth.requireOwner("id"))                                        // delete
	r.GET("/deploys", sd.deploysList).Bind(auth.requireUser())                                                     // the caller's deployments
	r.Any("/deploy", methodNotAllowed("POST"))
	r.Any("/deploy/{id}", func(e *core.RequestEvent) error {
		if e.Request.PathValue("id") == "claim" {
			return methodNotAllowed("POST")(e)
		}
		return methodNotAllowed("GET, PUT, DELETE")(e)
	})
	r.Any("/deploys", methodNotAllowed("GET"))
}

// acquireDeploySlot waits for one of the --concurrent-deploys slots and
// returns its release; it gives up when the client goes away.
func (sd *sitedrop) acquireDeploySlot(e *core.RequestEvent) (func(), error) {
	select {
	case sd.deploySlots <- struct{}{}:
		return func() { <-sd.deploySlots }, nil
	case <-e.Request.Context().Done():
		return nil, fail(statusClientClosed, msgClientClosed) // nobody to answer
	}
}

// readDeploy reads and decodes the body, then waits for a deploy slot;
// release frees the slot once the deploy is done. The body is read before
// the slot is taken, within the --deploy-memory budget (lease) and at a
// minimum rate, so that slow clients hold no slot. precheck sees the
// request's metadata before its files are decoded; an archive's (in the
// query) before its body is read. anon tells an anonymous deploy, whose
// archive may unpack to no more than the anonymous cap.
func (sd *sitedrop) readDeploy(e *core.RequestEvent, lease *memLease, anon bool, precheck func(*deployRequest) error) (*deployRequest, func(), error) {
	var req *deployRequest
	if format := archiveFormat(e.Request.Header.Get("Content-Type")); format != "" {
		var err error
		if req, err = sd.archiveMetadata(e, precheck); err != nil {
			return nil, nil, err
		}
		if err := sd.readArchiveDeploy(e, format, req, lease, anon); err != nil {
			return nil, nil, err
		}
	} else {
		req = &deployRequest{}
		if err := sd.readJSONDeploy(e, req, lease, precheck); err != nil {
			return nil, nil, err
		}
	}
	release, err := sd.acquireDeploySlot(e)
	if err != nil {
		return nil, nil, err
	}
	return req, release, nil
}

// readJSONDeploy decodes a JSON deploy body into req and prechecks it. The
// decoded form is reserved from lease too: its strings copy the body.
func (sd *sitedrop) readJSONDeploy(e *core.RequestEvent, req *deployRequest, lease *memLease, precheck func(*deployRequest) error) error {
	limit := sd.cfg.MaxBody
	body, err := sd.guardBody(e, limit, lease)
	if err != nil {
		return err
	}
	br := bufio.NewReaderSize(body, 64)
	if err := archiveSentAsJSON(br); err != nil {
		return err
	}
	if err := decodeJSON(br, limit, req); err != nil {
		return err
	}
	if err := lease.reserve(body.got); err != nil {
		return err
	}
	return precheck(req)
}

// deployCreate is POST /deploy.
func (sd *sitedrop) deployCreate(e *core.RequestEvent) error {
	user := userOf(e)
	var err error
	if user == nil {
		err = sd.anonDeploys.check(e.Response, sd.rateKey(e.Request))
	} else {
		err = sd.keyedDeploys.check(e.Response, user.Id)
	}
	if err != nil {
		return err
	}
	p := sites.CreateParams{Owner: user, AnonTTL: sd.cfg.AnonTTL}
	lease := sd.memoryLease(e)
	defer lease.release()
	// the slug and the slots before the content: a refused deploy is
	// refused before its files are decoded, looked up or unpacked
	req, release, err := sd.readDeploy(e, lease, user == nil, func(req *deployRequest) error {
		if req.Slug != nil {
			// a slug that is sent must be valid; "" does not mean "generate"
			if err := sites.ValidateSlug(*req.Slug); err != nil {
				return err
			}
			p.Slug = *req.Slug
		}
		return sd.svc.PrecheckCreate(user, p.Slug)
	})
	if err != nil {
		return err
	}
	defer release()
	ctx, cancel, limit := sd.deployWork(e, user == nil)
	defer cancel()
	var load sites.BlobLoader // anonymous deploys send their bytes
	if user != nil {
		load = sd.storedContent(e, lease)
	}
	if p.Meta, p.Upload, err = req.content(sd.cfg.MaxFiles, load); err != nil {
		return err
	}
	p.Upload.Memory = lease // the variants and changed pages, too
	// the rule files within their plan's limit, and their cost within the budget
	redirects, warnings, err := sites.CheckRules(p.Upload.Files, sites.RuleLimitOf(user))
	if err != nil {
		return err
	}
	if err := workCheck(e, ctx, limit); err != nil {
		return err
	}
	if p.Meta.Protect, err = req.protection(); err != nil { // slow: after the cheap checks
		return err
	}
	if err := workCheck(e, ctx, limit); err != nil {
		return err
	}
	refund := func() {}
	if user == nil {
		if refund, err = sd.chargeAnonStorage(e, p.Upload); err != nil {
			return err
		}
	}
	created, err := sd.svc.Create(ctx, p)
	if err != nil {
		refund()
		sd.gcDue.set() // blobs may have been written before the failure
		return overWorkBudget(e, ctx, limit, err)
	}
	rec := created.Record
	slug := sites.DeploymentOf(rec).Slug()
	ans := wire.DeployAnswer{
		DeployRef: wire.DeployRef{ID: rec.Id, Slug: slug, URL: sd.siteURL(slug)},
		ShareURL:  sd.shareURL(rec),
		Warnings:  warnings,
		Report:    deployReport(ctx, rec, p.Upload.Files, redirects, warnings),
	}
	if user == nil {
		ans.Claim = &wire.Claim{
			ClaimToken: created.ClaimToken,
			ClaimURL:   sd.claimURL(slug, created.ClaimToken),
			ExpiresAt:  timestamp(sites.DeploymentOf(rec).ExpiresAt()),
		}
	}
	return e.JSON(http.StatusOK, ans)
}

// deployView is GET /deploy/:id.
func (sd *sitedrop) deployView(e *core.RequestEvent) error {
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
		URL:         sd.siteURL(slug),
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

// deployUpdate is PUT /deploy/:id.
func (sd *sitedrop) deployUpdate(e *core.RequestEvent) error {
	user, rec := userOf(e), ownedOf(e)
	if err := sd.keyedDeploys.check(e.Response, sites.DeploymentOf(rec).OwnerID()); err != nil {
		return err
	}
	lease := sd.memoryLease(e)
	defer lease.release()
	req, release, err := sd.readDeploy(e, lease, false, func(req *deployRequest) error {
		if req.Slug != nil {
			return fail(http.StatusBadRequest, msgSlugImmutable)
		}
		return nil
	})
	if err != nil {
		return err
	}
	defer release()
	ctx, cancel, limit := sd.deployWork(e, false)
	defer cancel()
	meta, up, err := req.content(sd.cfg.MaxFiles, sd.storedContent(e, lease))
	if err != nil {
		return err
	}
	up.Memory = lease // the variants and changed pages, too
	// the rule files within their plan's limit, and their cost within the budget
	redirects, warnings, err := sites.CheckRules(up.Files, sites.RuleLimitOf(user))
	if err != nil {
		return err
	}
	if err := workCheck(e, ctx, limit); err != nil {
		return err
	}
	if meta.Protect, err = req.protection(); err != nil { // slow: after the cheap checks
		return err
	}
	if err := workCheck(e, ctx, limit); err != nil {
		return err
	}
	rec, err = sd.svc.Replace(ctx, rec, meta, up)
	if err != nil {
		sd.gcDue.set() // blobs may have been written before the failure
		return overWorkBudget(e, ctx, limit, err)
	}
	slug := sites.DeploymentOf(rec).Slug()
	return e.JSON(http.StatusOK, wire.DeployAnswer{
		DeployRef: wire.DeployRef{ID: rec.Id, Slug: slug, URL: sd.siteURL(slug)},
		ShareURL:  sd.shareURL(rec),
		Warnings:  warnings,
		Report:    deployReport(ctx, rec, up.Files, redirects, warnings),
	})
}

// deployDelete is DELETE /deploy/:id.
func (sd *sitedrop) deployDelete(e *core.RequestEvent) error {
	rec := ownedOf(e)
	if err := sd.svc.Delete(rec); err != nil {
		return err
	}
	return e.JSON(http.StatusOK, wire.IDMessage{
		ID:      rec.Id,
		Message: "Deployment " + sites.DeploymentOf(rec).Slug() + " deleted",
	})
}

// deploysList is GET /deploys.
func (sd *sitedrop) deploysList(e *core.RequestEvent) error {
	recs, err := sd.svc.ListOwned(userOf(e))
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
			URL:       sd.siteURL(slug),
			Title:     dep.Title(),
			UpdatedAt: timestamp(dep.Updated()),
		})
	}
	return e.JSON(http.StatusOK, wire.DeploymentList{Deployments: out})
}

// deployClaim is POST /deploy/claim.
func (sd *sitedrop) deployClaim(e *core.RequestEvent) error {
	var req wire.ClaimRequest
	if err := sd.readJSON(e, claimBodyLimit, &req); err != nil {
		return err
	}
	if req.Slug == nil || *req.Slug == "" {
		return fail(http.StatusBadRequest, "slug is required")
	}
	if req.ClaimToken == nil || *req.ClaimToken == "" {
		return fail(http.StatusBadRequest, "claim_token is required")
	}
	rec, err := sd.svc.Claim(userOf(e), *req.Slug, *req.ClaimToken)
	if err != nil {
		return err
	}
	slug := sites.DeploymentOf(rec).Slug()
	return e.JSON(http.StatusOK, wire.DeployRef{ID: rec.Id, Slug: slug, URL: sd.siteURL(slug)})
}

// timestamp formats t as RFC 3339 in UTC with a Z.
func timestamp(t time.Time) string {
	return t.UTC().Format(time.RFC3339)
}

// chargeAnonStorage counts an anonymous deploy's bytes against its client's
// --anon-storage-per-ip budget of the --anon-ttl window: 429 (with
// Retry-After) when the budget is spent, 413 when the deploy alone is
// larger. refund takes the bytes back when the deploy then fails.
func (sd *sitedrop) chargeAnonStorage(e *core.RequestEvent, up sites.Upload) (refund func(), err error) {
	var size int64
	for _, f := range up.Files {
		size += int64(len(f.Data))
	}
	limit := int64(sd.anonStorage.Max())
	if size > limit {
		return nil, fail(http.StatusRequestEntityTooLarge, "%s", anonTooLarge(limit))
	}
	key := sd.rateKey(e.Request)
	if err := sd.anonStorage.checkN(e.Response, key, int(size),
		"Anonymous storage limit reached: at most "+sites.FormatBytes(limit)+" from one address until its earlier deploys expire; deploy with an API key"); err != nil {
		return nil, err
	}
	return func() { sd.anonStorage.Refund(key, int(size)) }, nil
}

// anonTooLarge is the refusal of a site over the anonymous cap (limit).
func anonTooLarge(limit int64) string {
	return "Site too large for an anonymous deploy: the limit is " + sites.FormatBytes(limit) + "; deploy with an API key"
}
