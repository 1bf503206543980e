package hooks

import (
	"net/http"

	"github.com/pocketbase/pocketbase/core"
)

// msgVersionNotFound answers a rollback to a version that is not kept.
const msgVersionNotFound = "Version not found"

// rollbackBodyLimit bounds the body of POST /deploy/:id/rollback.
const rollbackBodyLimit = 1 << 10

// bindVersionsAPI binds GET /deploy/:id/versions and POST
// /deploy/:id/rollback (owner only; 404 otherwise).
func bindVersionsAPI(sd *sitedrop, se *core.ServeEvent) {
	r := se.Router
	r.GET("/deploy/{id}/versions", sd.deployVersions)
	r.POST("/deploy/{id}/rollback", sd.deployRollback)
	r.Any("/deploy/{id}/versions", methodNotAllowed("GET"))
	r.Any("/deploy/{id}/rollback", methodNotAllowed("POST"))
}

// versionOut is one entry of GET /deploy/:id/versions.
type versionOut struct {
	Version    int    `json:"version"`
	CreatedAt  string `json:"created_at"`
	FileCount  int    `json:"file_count"`
	TotalBytes int64  `json:"total_bytes"`
	Live       bool   `json:"live"`
}

// deployVersions is GET /deploy/:id/versions: the kept versions, newest
// first.
func (sd *sitedrop) deployVersions(e *core.RequestEvent) error {
	rec, err := sd.ownedByPathValue(e, "id")
	if err != nil {
		return err
	}
	vs, err := sd.svc.ListVersions(rec)
	if err != nil {
		return err
	}
	out := make([]versionOut, 0, len(vs))
	for _, v := range vs {
		out = append(out, versionOut{
			Version:    v.Number,
			CreatedAt:  timestamp(v.Created),
			FileCount:  v.FileCount,
			TotalBytes: v.TotalBytes,
			Live:       v.Live,
		})
	}
	return e.JSON(http.StatusOK, map[string]any{"versions": out})
}

// rollbackRequest is the body of POST /deploy/:id/rollback.
type rollbackRequest struct {
	Version *int `json:"version"`
}

// rollbackOut is the answer of a rollback: the deployment and the version
// now live.
type rollbackOut struct {
	deployRef
	Version int `json:"version"`
}

// deployRollback is POST /deploy/:id/rollback {"version": N}.
func (sd *sitedrop) deployRollback(e *core.RequestEvent) error {
	rec, err := sd.ownedByPathValue(e, "id")
	if err != nil {
		return err
	}
	var req rollbackRequest
	if err := sd.readJSON(e, rollbackBodyLimit, &req); err != nil {
		return err
	}
	if req.Version == nil || *req.Version < 1 {
		return fail(http.StatusBadRequest, "version is required (a positive version number)")
	}
	rec, err = sd.svc.Rollback(rec, *req.Version)
	if err != nil {
		return err
	}
	slug := rec.GetString("slug")
	return e.JSON(http.StatusOK, rollbackOut{
		deployRef: deployRef{ID: rec.Id, Slug: slug, URL: sd.siteURL(slug)},
		Version:   *req.Version,
	})
}
