package hooks

import (
	"net/http"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/router"

	"sitedrop/sites"
	"sitedrop/sites/wire"
)

// msgVersionNotFound answers a rollback to a version that is not kept.
const msgVersionNotFound = "Version not found"

// rollbackBodyLimit bounds the body of POST /deploy/:id/rollback.
const rollbackBodyLimit = 1 << 10

// bindVersionsAPI binds GET /deploy/:id/versions and POST
// /deploy/:id/rollback (owner only; 404 otherwise).
func bindVersionsAPI(r *router.Router[*core.RequestEvent], api *deployAPI, auth *apiAuth) {
	r.GET("/deploy/{id}/versions", api.versions).Bind(auth.requireOwner("id"))
	r.POST("/deploy/{id}/rollback", api.rollback).Bind(auth.requireOwner("id"))
	r.Any("/deploy/{id}/versions", methodNotAllowed("GET"))
	r.Any("/deploy/{id}/rollback", methodNotAllowed("POST"))
}

// versions is GET /deploy/:id/versions: the kept versions, newest
// first.
func (api *deployAPI) versions(e *core.RequestEvent) error {
	rec := ownedOf(e)
	vs, err := api.deploys.ListVersions(rec)
	if err != nil {
		return err
	}
	out := make([]wire.Version, 0, len(vs))
	for _, v := range vs {
		out = append(out, wire.Version{
			Version:    v.Number,
			CreatedAt:  timestamp(v.Created),
			FileCount:  v.FileCount,
			TotalBytes: v.TotalBytes,
			Live:       v.Live,
		})
	}
	return e.JSON(http.StatusOK, wire.VersionList{Versions: out})
}

// rollback is POST /deploy/:id/rollback {"version": N}.
func (api *deployAPI) rollback(e *core.RequestEvent) error {
	rec := ownedOf(e)
	var req wire.RollbackRequest
	if err := api.intake.Guards.ReadJSON(e.Response, e.Request, rollbackBodyLimit, &req); err != nil {
		return err
	}
	if req.Version == nil || *req.Version < 1 {
		return fail(http.StatusBadRequest, "version is required (a positive version number)")
	}
	rec, err := api.deploys.Rollback(rec, *req.Version)
	if err != nil {
		return err
	}
	slug := sites.DeploymentOf(rec).Slug()
	return e.JSON(http.StatusOK, wire.Rollback{
		DeployRef: wire.DeployRef{ID: rec.Id, Slug: slug, URL: api.links.Site(slug)},
		Version:   *req.Version,
	})
}
