package hooks

import (
	"bufio"
	"io"
	"net/http"
	"time"

	"github.com/pocketbase/pocketbase/apis"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/router"

	"sitedrop/hooks/server"
	"sitedrop/sites"
	"sitedrop/sites/wire"
)

// claimBodyLimit bounds the small JSON body of a claim.
const claimBodyLimit = 64 << 10

// deployAPI serves the deploy endpoints (and the versions ones, which
// act on the same deployments). It holds exactly the services they use,
// built before it is: bindDeployAPI is handed a finished value.
type deployAPI struct {
	// cfg is read for --max-body, --max-files and --anon-ttl, and the
	// URLs of the answers.
	cfg *Config
	// deploys creates, replaces, finds and deletes deployments.
	deploys *sites.Service
	// gate holds the deploy rate limits and the processing slots.
	gate *deployGate
	// guards read the bodies within the memory budget and at a minimum
	// rate, and hold the anonymous storage limit and the work budgets.
	guards *bodyGuards
	// proxies give the rate key of an anonymous client.
	proxies server.TrustedProxies
	// gc is set when a failed deploy may have left unreferenced blobs.
	gc *sites.Upkeep
}

// bindDeployAPI registers the deploy endpoints of the contract on r, each
// behind the auth it needs (auth).
func bindDeployAPI(r *router.Router[*core.RequestEvent], api *deployAPI, auth *apiAuth) {
	// deploy bodies are bounded by --max-body in guardBody, with a message
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

// deployGate bounds the deploys: anonymous ones per client address, keyed
// ones per account, and all of them to the --concurrent-deploys slots. The
// deploy API, the blob uploads and the pages' redeploys share one.
type deployGate struct {
	anon  *limiter // --anon-deploys-per-hour per client IP
	keyed *limiter // --deploys-per-minute per account
	slots chan struct{}
}

// newDeployGate builds the gate of cfg's limits.
func newDeployGate(cfg *Config) *deployGate {
	return &deployGate{
		anon:  newLimiter(cfg.AnonDeploysPerHour, time.Hour),
		keyed: newLimiter(cfg.DeploysPerMinute, time.Minute),
		slots: make(chan struct{}, cfg.ConcurrentDeploys),
	}
}

// acquire waits for one of the --concurrent-deploys slots and returns its
// release; it gives up when the client goes away.
func (g *deployGate) acquire(e *core.RequestEvent) (func(), error) {
	select {
	case g.slots <- struct{}{}:
		return func() { <-g.slots }, nil
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
func (api *deployAPI) readDeploy(e *core.RequestEvent, lease *memLease, anon bool, precheck func(*deployRequest) error) (*deployRequest, func(), error) {
	var req *deployRequest
	if format := archiveFormat(e.Request.Header.Get("Content-Type")); format != "" {
		var err error
		if req, err = api.archiveMetadata(e, precheck); err != nil {
			return nil, nil, err
		}
		if err := api.readArchiveDeploy(e, format, req, lease, anon); err != nil {
			return nil, nil, err
		}
	} else {
		req = &deployRequest{}
		if err := api.readJSONDeploy(e, req, lease, precheck); err != nil {
			return nil, nil, err
		}
	}
	release, err := api.gate.acquire(e)
	if err != nil {
		return nil, nil, err
	}
	return req, release, nil
}

// readJSONDeploy decodes a JSON deploy body into req and prechecks it. The
// decoded form is reserved from lease too: its strings copy the body.
func (api *deployAPI) readJSONDeploy(e *core.RequestEvent, req *deployRequest, lease *memLease, precheck func(*deployRequest) error) error {
	limit := api.cfg.MaxBody
	body, err := api.guards.guardBody(e, limit, lease)
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

// create is POST /deploy.
func (api *deployAPI) create(e *core.RequestEvent) error {
	user := userOf(e)
	var err error
	if user == nil {
		err = api.gate.anon.check(e.Response, api.proxies.RateKey(e.Request))
	} else {
		err = api.gate.keyed.check(e.Response, user.Id)
	}
	if err != nil {
		return err
	}
	p := sites.CreateParams{Owner: user, AnonTTL: api.cfg.AnonTTL}
	lease := api.guards.memoryLease(e)
	defer lease.release()
	// the slug and the slots before the content: a refused deploy is
	// refused before its files are decoded, looked up or unpacked
	req, release, err := api.readDeploy(e, lease, user == nil, func(req *deployRequest) error {
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
	ctx, cancel, limit := api.guards.deployWork(e, user == nil)
	defer cancel()
	var load sites.BlobLoader // anonymous deploys send their bytes
	if user != nil {
		load = api.storedContent(e, lease)
	}
	if p.Meta, p.Upload, err = req.content(api.cfg.MaxFiles, load); err != nil {
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
		if refund, err = api.chargeAnonStorage(e, p.Upload); err != nil {
			return err
		}
	}
	created, err := api.deploys.Create(ctx, p)
	if err != nil {
		refund()
		api.gc.MarkDue() // blobs may have been written before the failure
		return overWorkBudget(e, ctx, limit, err)
	}
	rec := created.Record
	slug := sites.DeploymentOf(rec).Slug()
	ans := wire.DeployAnswer{
		DeployRef: wire.DeployRef{ID: rec.Id, Slug: slug, URL: api.cfg.siteURL(slug)},
		ShareURL:  api.cfg.shareURL(rec),
		Warnings:  warnings,
		Report:    deployReport(ctx, rec, p.Upload.Files, redirects, warnings),
	}
	if user == nil {
		ans.Claim = &wire.Claim{
			ClaimToken: created.ClaimToken,
			ClaimURL:   api.cfg.claimURL(slug, created.ClaimToken),
			ExpiresAt:  timestamp(sites.DeploymentOf(rec).ExpiresAt()),
		}
	}
	return e.JSON(http.StatusOK, ans)
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
		URL:         api.cfg.siteURL(slug),
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
	if err := api.gate.keyed.check(e.Response, sites.DeploymentOf(rec).OwnerID()); err != nil {
		return err
	}
	lease := api.guards.memoryLease(e)
	defer lease.release()
	req, release, err := api.readDeploy(e, lease, false, func(req *deployRequest) error {
		if req.Slug != nil {
			return fail(http.StatusBadRequest, msgSlugImmutable)
		}
		return nil
	})
	if err != nil {
		return err
	}
	defer release()
	ctx, cancel, limit := api.guards.deployWork(e, false)
	defer cancel()
	meta, up, err := req.content(api.cfg.MaxFiles, api.storedContent(e, lease))
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
	rec, err = api.deploys.Replace(ctx, rec, meta, up)
	if err != nil {
		api.gc.MarkDue() // blobs may have been written before the failure
		return overWorkBudget(e, ctx, limit, err)
	}
	slug := sites.DeploymentOf(rec).Slug()
	return e.JSON(http.StatusOK, wire.DeployAnswer{
		DeployRef: wire.DeployRef{ID: rec.Id, Slug: slug, URL: api.cfg.siteURL(slug)},
		ShareURL:  api.cfg.shareURL(rec),
		Warnings:  warnings,
		Report:    deployReport(ctx, rec, up.Files, redirects, warnings),
	})
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
			URL:       api.cfg.siteURL(slug),
			Title:     dep.Title(),
			UpdatedAt: timestamp(dep.Updated()),
		})
	}
	return e.JSON(http.StatusOK, wire.DeploymentList{Deployments: out})
}

// claim is POST /deploy/claim.
func (api *deployAPI) claim(e *core.RequestEvent) error {
	var req wire.ClaimRequest
	if err := api.guards.readJSON(e, claimBodyLimit, &req); err != nil {
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
	return e.JSON(http.StatusOK, wire.DeployRef{ID: rec.Id, Slug: slug, URL: api.cfg.siteURL(slug)})
}

// storedContent loads the contents a deploy names by sha256, each once,
// within what an archive may unpack to (archiveUnpackFactor x --max-body)
// in all, reserving them from lease.
func (api *deployAPI) storedContent(e *core.RequestEvent, lease *memLease) sites.BlobLoader {
	limit := archiveUnpackFactor * api.cfg.MaxBody
	budget := limit
	blobs := api.deploys.Store()
	loaded := map[string][]byte{}
	return func(hash string) ([]byte, error) {
		if data, ok := loaded[hash]; ok {
			return data, nil
		}
		b, err := blobs.Open(e.Request.Context(), hash)
		if err != nil {
			return nil, err
		}
		defer b.Close()
		if b.Size() > budget {
			return nil, fail(http.StatusRequestEntityTooLarge, "Site too large: the files a deploy names may total %s", sites.FormatBytes(limit))
		}
		if err := lease.reserve(b.Size()); err != nil {
			return nil, err
		}
		budget -= b.Size()
		data := make([]byte, b.Size())
		if _, err := io.ReadFull(b, data); err != nil {
			return nil, err
		}
		loaded[hash] = data
		return data, nil
	}
}

// timestamp formats t as RFC 3339 in UTC with a Z.
func timestamp(t time.Time) string {
	return t.UTC().Format(time.RFC3339)
}

// chargeAnonStorage counts an anonymous deploy's bytes against its client's
// --anon-storage-per-ip budget of the --anon-ttl window: 429 (with
// Retry-After) when the budget is spent, 413 when the deploy alone is
// larger. refund takes the bytes back when the deploy then fails.
func (api *deployAPI) chargeAnonStorage(e *core.RequestEvent, up sites.Upload) (refund func(), err error) {
	var size int64
	for _, f := range up.Files {
		size += int64(len(f.Data))
	}
	limit := int64(api.guards.anonStorage.Max())
	if size > limit {
		return nil, fail(http.StatusRequestEntityTooLarge, "%s", anonTooLarge(limit))
	}
	key := api.proxies.RateKey(e.Request)
	if err := api.guards.anonStorage.checkN(e.Response, key, int(size),
		"Anonymous storage limit reached: at most "+sites.FormatBytes(limit)+" from one address until its earlier deploys expire; deploy with an API key"); err != nil {
		return nil, err
	}
	return func() { api.guards.anonStorage.Refund(key, int(size)) }, nil
}

// anonTooLarge is the refusal of a site over the anonymous cap (limit).
func anonTooLarge(limit int64) string {
	return "Site too large for an anonymous deploy: the limit is " + sites.FormatBytes(limit) + "; deploy with an API key"
}
