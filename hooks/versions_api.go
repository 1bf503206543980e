package hooks

import (
	"net/http"
	"strconv"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/router"

	"sitedrop/hooks/internal/apierr"
	"sitedrop/sites"
	"sitedrop/sites/wire"
)

// The answers of a version or an alias the deployment does not have.
const (
	msgVersionNotFound = "Version not found"
	msgAliasNotFound   = "Alias not found"
)

// rollbackBodyLimit bounds the body of POST /deploy/:id/rollback.
const rollbackBodyLimit = 1 << 10

// bindVersionsAPI binds the versions endpoints: GET /deploy/:id/versions,
// POST /deploy/:id/rollback, POST /deploy/:id/versions/:version/promote,
// GET /deploy/:id/versions/:version/files, GET /deploy/:id/diff, GET
// /deploy/:id/aliases and DELETE /deploy/:id/aliases/:name (owner only;
// 404 otherwise).
func bindVersionsAPI(r *router.Router[*core.RequestEvent], api *deployAPI, auth *apiAuth) {
	r.GET("/deploy/{id}/versions", api.versions).Bind(auth.requireOwner("id"))
	r.POST("/deploy/{id}/rollback", api.rollback).Bind(auth.requireOwner("id"))
	r.POST("/deploy/{id}/versions/{version}/promote", api.promote).Bind(auth.requireOwner("id"))
	r.GET("/deploy/{id}/versions/{version}/files", api.versionFiles).Bind(auth.requireOwner("id"))
	r.GET("/deploy/{id}/diff", api.diff).Bind(auth.requireOwner("id"))
	r.GET("/deploy/{id}/aliases", api.aliases).Bind(auth.requireOwner("id"))
	r.DELETE("/deploy/{id}/aliases/{name}", api.deleteAlias).Bind(auth.requireOwner("id"))
	r.Any("/deploy/{id}/versions", methodNotAllowed("GET"))
	r.Any("/deploy/{id}/rollback", methodNotAllowed("POST"))
	r.Any("/deploy/{id}/versions/{version}/promote", methodNotAllowed("POST"))
	r.Any("/deploy/{id}/versions/{version}/files", methodNotAllowed("GET"))
	r.Any("/deploy/{id}/diff", methodNotAllowed("GET"))
	r.Any("/deploy/{id}/aliases", methodNotAllowed("GET"))
	r.Any("/deploy/{id}/aliases/{name}", methodNotAllowed("DELETE"))
}

// versionNumber reads a version number, a positive integer, sent as
// field (a path segment or a query parameter): a 400 naming it otherwise.
func versionNumber(field, v string) (int, error) {
	if v == "" {
		return 0, apierr.Fail(http.StatusBadRequest, "%s is required (a positive version number)", field)
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, apierr.Fail(http.StatusBadRequest, "%s must be a positive version number", field)
	}
	return n, nil
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
			Message:    v.Message,
			PreviewURL: api.links.Preview(sites.DeploymentOf(rec).Slug(), v.Number),
			Aliases:    v.Aliases,
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
		return apierr.Fail(http.StatusBadRequest, "version is required (a positive version number)")
	}
	rec, err := api.deploys.Rollback(e.Request.Context(), rec, *req.Version)
	if err != nil {
		return err
	}
	slug := sites.DeploymentOf(rec).Slug()
	return e.JSON(http.StatusOK, wire.Rollback{
		DeployRef: wire.DeployRef{ID: rec.Id, Slug: slug, URL: api.links.Site(slug)},
		Version:   *req.Version,
	})
}

// promote is POST /deploy/:id/versions/:version/promote: the version
// (a draft, or an earlier one) goes live atomically; aliases stay.
func (api *deployAPI) promote(e *core.RequestEvent) error {
	n, err := versionNumber("version", e.Request.PathValue("version"))
	if err != nil {
		return err
	}
	rec, err := api.deploys.Promote(e.Request.Context(), ownedOf(e), n)
	if err != nil {
		return err
	}
	slug := sites.DeploymentOf(rec).Slug()
	return e.JSON(http.StatusOK, wire.Promote{
		DeployRef:  wire.DeployRef{ID: rec.Id, Slug: slug, URL: api.links.Site(slug)},
		Version:    n,
		PreviewURL: api.links.Preview(slug, n),
	})
}

// versionFiles is GET /deploy/:id/versions/:version/files.
func (api *deployAPI) versionFiles(e *core.RequestEvent) error {
	n, err := versionNumber("version", e.Request.PathValue("version"))
	if err != nil {
		return err
	}
	fs, err := api.deploys.VersionFiles(ownedOf(e), n)
	if err != nil {
		return err
	}
	out := wire.VersionFiles{Version: n, Files: make([]wire.VersionFile, len(fs))}
	for i, f := range fs {
		out.Files[i] = wire.VersionFile{Path: f.Path, Size: f.Size, Hash: f.Hash}
	}
	return e.JSON(http.StatusOK, out)
}

// diff is GET /deploy/:id/diff?from=N&to=M: what version M adds, changes
// and removes compared with version N.
func (api *deployAPI) diff(e *core.RequestEvent) error {
	q := e.Request.URL.Query()
	from, err := versionNumber("from", q.Get("from"))
	if err != nil {
		return err
	}
	to, err := versionNumber("to", q.Get("to"))
	if err != nil {
		return err
	}
	d, err := api.deploys.DiffVersions(ownedOf(e), from, to)
	if err != nil {
		return err
	}
	out := wire.Diff{From: from, To: to,
		Added:   make([]wire.DiffFile, len(d.Added)),
		Changed: make([]wire.DiffChanged, len(d.Changed)),
		Removed: make([]wire.DiffFile, len(d.Removed)),
	}
	for i, f := range d.Added {
		out.Added[i] = wire.DiffFile{Path: f.Path, Size: f.To}
	}
	for i, f := range d.Changed {
		out.Changed[i] = wire.DiffChanged{Path: f.Path, FromSize: f.From, ToSize: f.To}
	}
	for i, f := range d.Removed {
		out.Removed[i] = wire.DiffFile{Path: f.Path, Size: f.From}
	}
	return e.JSON(http.StatusOK, out)
}

// aliases is GET /deploy/:id/aliases.
func (api *deployAPI) aliases(e *core.RequestEvent) error {
	rec := ownedOf(e)
	as, err := api.deploys.ListAliases(rec)
	if err != nil {
		return err
	}
	slug := sites.DeploymentOf(rec).Slug()
	out := wire.AliasList{Aliases: make([]wire.Alias, len(as))}
	for i, a := range as {
		out.Aliases[i] = wire.Alias{Name: a.Name, Version: a.Version, URL: api.links.Alias(slug, a.Name)}
	}
	return e.JSON(http.StatusOK, out)
}

// deleteAlias is DELETE /deploy/:id/aliases/:name: the alias's host stops
// serving; its version stays.
func (api *deployAPI) deleteAlias(e *core.RequestEvent) error {
	rec, name := ownedOf(e), e.Request.PathValue("name")
	if err := api.deploys.DeleteAlias(rec, name); err != nil {
		return err
	}
	return e.JSON(http.StatusOK, wire.AliasDeleted{
		Name:    name,
		Message: "Alias " + name + " of " + sites.DeploymentOf(rec).Slug() + " deleted",
	})
}
