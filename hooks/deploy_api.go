package hooks

import (
	"net/http"
	"time"

	"github.com/pocketbase/pocketbase/apis"
	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
)

// claimBodyLimit bounds the small JSON body of a claim.
const claimBodyLimit = 64 << 10

// bindDeployAPI registers the deploy endpoints of the contract.
func bindDeployAPI(sd *sitedrop, se *core.ServeEvent) {
	r := se.Router
	// deploy bodies are bounded by --max-body in readJSON, with a message
	// that names the limit, instead of PocketBase's 32 MiB default.
	r.POST("/deploy", sd.deployCreate).Unbind(apis.DefaultBodyLimitMiddlewareId)     // create, keyed or anonymous
	r.POST("/deploy/claim", sd.deployClaim)                                          // claim an anonymous deployment
	r.GET("/deploy/{id}", sd.deployView)                                             // metadata
	r.PUT("/deploy/{id}", sd.deployUpdate).Unbind(apis.DefaultBodyLimitMiddlewareId) // replace content
	r.DELETE("/deploy/{id}", sd.deployDelete)                                        // delete
	r.GET("/deploys", sd.deploysList)                                                // the caller's deployments
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
		return nil, fail(http.StatusServiceUnavailable, "Server busy: try again")
	}
}

// readDeploy waits for a deploy slot and decodes the body; release frees
// the slot once the deploy is done. precheck sees the request's metadata
// before its files are decoded; an archive's (in the query) before it
// waits for a slot and before its body is read.
func (sd *sitedrop) readDeploy(e *core.RequestEvent, precheck func(*deployRequest) error) (*deployRequest, func(), error) {
	if format := archiveFormat(e.Request.Header.Get("Content-Type")); format != "" {
		req, err := sd.archiveMetadata(e, precheck)
		if err != nil {
			return nil, nil, err
		}
		release, err := sd.acquireDeploySlot(e)
		if err != nil {
			return nil, nil, err
		}
		if err := sd.readArchiveDeploy(e, format, req); err != nil {
			release()
			return nil, nil, err
		}
		return req, release, nil
	}
	release, err := sd.acquireDeploySlot(e)
	if err != nil {
		return nil, nil, err
	}
	req := &deployRequest{}
	if err := sd.readJSONDeploy(e, req, precheck); err != nil {
		release()
		return nil, nil, err
	}
	return req, release, nil
}

// readJSONDeploy decodes a JSON deploy body into req and prechecks it.
func (sd *sitedrop) readJSONDeploy(e *core.RequestEvent, req *deployRequest, precheck func(*deployRequest) error) error {
	if err := archiveSentAsJSON(e, sd.cfg.MaxBody); err != nil {
		return err
	}
	if err := readJSON(e, sd.cfg.MaxBody, req); err != nil {
		return err
	}
	return precheck(req)
}

// deployCreate is POST /deploy.
func (sd *sitedrop) deployCreate(e *core.RequestEvent) error {
	user, err := sd.optionalUser(e)
	if err != nil {
		return err
	}
	if user == nil {
		err = sd.anonDeploys.check(e.Response, sd.rateKey(e.Request))
	} else {
		err = sd.keyedDeploys.check(e.Response, user.Id)
	}
	if err != nil {
		return err
	}
	p := sites.CreateParams{Owner: user, AnonTTL: sd.cfg.AnonTTL}
	// the slug and the slots before the content: a refused deploy is
	// refused before its files are decoded, looked up or unpacked
	req, release, err := sd.readDeploy(e, func(req *deployRequest) error {
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
	var load sites.BlobLoader // anonymous deploys send their bytes
	if user != nil {
		load = sd.storedContent(e)
	}
	if p.Meta, p.Upload, err = req.content(sd.cfg.MaxFiles, load); err != nil {
		return err
	}
	created, err := sd.svc.Create(e.Request.Context(), p)
	if err != nil {
		sd.gcDue.set() // blobs may have been written before the failure
		return err
	}
	rec := created.Record
	slug := rec.GetString("slug")
	if user != nil {
		return e.JSON(http.StatusOK, deployRef{ID: rec.Id, Slug: slug, URL: sd.siteURL(slug)})
	}
	return e.JSON(http.StatusOK, anonDeployRef{
		deployRef:  deployRef{ID: rec.Id, Slug: slug, URL: sd.siteURL(slug)},
		ClaimToken: created.ClaimToken,
		ClaimURL:   sd.claimURL(slug, created.ClaimToken),
		ExpiresAt:  timestamp(rec.GetDateTime("expires_at").Time()),
	})
}

// deployView is GET /deploy/:id.
func (sd *sitedrop) deployView(e *core.RequestEvent) error {
	rec, err := sd.ownedByPathValue(e, "id")
	if err != nil {
		return err
	}
	var desc *string
	if d := rec.GetString("description"); d != "" {
		desc = &d
	}
	slug := rec.GetString("slug")
	return e.JSON(http.StatusOK, deployStatus{
		ID:          rec.Id,
		Slug:        slug,
		URL:         sd.siteURL(slug),
		Status:      rec.GetString("status"),
		StorageType: rec.GetString("storage_type"),
		IsSPA:       rec.GetBool("is_spa"),
		Title:       rec.GetString("title"),
		Description: desc,
		Favicon:     rec.GetString("favicon"),
		CreatedAt:   timestamp(rec.GetDateTime("created").Time()),
		UpdatedAt:   timestamp(rec.GetDateTime("updated").Time()),
	})
}

// deployUpdate is PUT /deploy/:id.
func (sd *sitedrop) deployUpdate(e *core.RequestEvent) error {
	rec, err := sd.ownedByPathValue(e, "id")
	if err != nil {
		return err
	}
	if err := sd.keyedDeploys.check(e.Response, rec.GetString("owner")); err != nil {
		return err
	}
	req, release, err := sd.readDeploy(e, func(req *deployRequest) error {
		if req.Slug != nil {
			return fail(http.StatusBadRequest, msgSlugImmutable)
		}
		return nil
	})
	if err != nil {
		return err
	}
	defer release()
	meta, up, err := req.content(sd.cfg.MaxFiles, sd.storedContent(e))
	if err != nil {
		return err
	}
	rec, err = sd.svc.Replace(e.Request.Context(), rec, meta, up)
	if err != nil {
		sd.gcDue.set() // blobs may have been written before the failure
		return err
	}
	slug := rec.GetString("slug")
	return e.JSON(http.StatusOK, deployRef{ID: rec.Id, Slug: slug, URL: sd.siteURL(slug)})
}

// deployDelete is DELETE /deploy/:id.
func (sd *sitedrop) deployDelete(e *core.RequestEvent) error {
	rec, err := sd.ownedByPathValue(e, "id")
	if err != nil {
		return err
	}
	if err := sd.svc.Delete(rec); err != nil {
		return err
	}
	return e.JSON(http.StatusOK, map[string]string{
		"id":      rec.Id,
		"message": "Deployment " + rec.GetString("slug") + " deleted",
	})
}

// deploysList is GET /deploys.
func (sd *sitedrop) deploysList(e *core.RequestEvent) error {
	user, err := sd.requireUser(e)
	if err != nil {
		return err
	}
	recs, err := sd.svc.ListOwned(user)
	if err != nil {
		return err
	}
	out := make([]deploySummary, 0, len(recs))
	for _, rec := range recs {
		slug := rec.GetString("slug")
		out = append(out, deploySummary{
			ID:        rec.Id,
			Slug:      slug,
			URL:       sd.siteURL(slug),
			Title:     rec.GetString("title"),
			UpdatedAt: timestamp(rec.GetDateTime("updated").Time()),
		})
	}
	return e.JSON(http.StatusOK, map[string]any{"deployments": out})
}

// deployClaim is POST /deploy/claim.
func (sd *sitedrop) deployClaim(e *core.RequestEvent) error {
	user, err := sd.requireUser(e)
	if err != nil {
		return err
	}
	var req claimRequest
	if err := readJSON(e, claimBodyLimit, &req); err != nil {
		return err
	}
	if req.Slug == nil || *req.Slug == "" {
		return fail(http.StatusBadRequest, "slug is required")
	}
	if req.ClaimToken == nil || *req.ClaimToken == "" {
		return fail(http.StatusBadRequest, "claim_token is required")
	}
	rec, err := sd.svc.Claim(user, *req.Slug, *req.ClaimToken)
	if err != nil {
		return err
	}
	slug := rec.GetString("slug")
	return e.JSON(http.StatusOK, deployRef{ID: rec.Id, Slug: slug, URL: sd.siteURL(slug)})
}

// deployRef is the short answer of create, update and claim.
type deployRef struct {
	ID   string `json:"id"`
	Slug string `json:"slug"`
	URL  string `json:"url"`
}

// anonDeployRef is the answer of an anonymous create.
type anonDeployRef struct {
	deployRef
	ClaimToken string `json:"claim_token"`
	ClaimURL   string `json:"claim_url"`
	ExpiresAt  string `json:"expires_at"`
}

// deployStatus is the answer of GET /deploy/:id.
type deployStatus struct {
	ID          string  `json:"id"`
	Slug        string  `json:"slug"`
	URL         string  `json:"url"`
	Status      string  `json:"status"`
	StorageType string  `json:"storage_type"`
	IsSPA       bool    `json:"is_spa"`
	Title       string  `json:"title"`
	Description *string `json:"description"`
	Favicon     string  `json:"favicon"`
	CreatedAt   string  `json:"created_at"`
	UpdatedAt   string  `json:"updated_at"`
}

// deploySummary is one entry of GET /deploys.
type deploySummary struct {
	ID        string `json:"id"`
	Slug      string `json:"slug"`
	URL       string `json:"url"`
	Title     string `json:"title"`
	UpdatedAt string `json:"updated_at"`
}

// timestamp formats t as RFC 3339 in UTC with a Z.
func timestamp(t time.Time) string {
	return t.UTC().Format(time.RFC3339)
}
