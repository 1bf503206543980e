package hooks

import (
	"net/http"
	"time"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/router"

	"sitedrop/hooks/internal/apierr"
	"sitedrop/sites"
	"sitedrop/sites/wire"
)

// renameBodyLimit bounds the body of POST /deploy/:id/rename.
const renameBodyLimit = 1 << 10

// msgSitePaused answers a form posted to a paused site.
const msgSitePaused = "This site is paused: its forms take no submissions until its owner resumes it"

// pausedRetryAfter is the Retry-After, in seconds, of a paused site's
// refusals: as its hosts' paused page (sites/serve).
const pausedRetryAfter = 3600

// bindSiteControlsAPI binds the owner's controls of a site: POST
// /deploy/:id/rename {"slug"}, POST /deploy/:id/pause and POST
// /deploy/:id/resume (owner only; 404 otherwise), each counted against
// the account's deploys per minute.
func bindSiteControlsAPI(r *router.Router[*core.RequestEvent], api *deployAPI, auth *apiAuth) {
	r.POST("/deploy/{id}/rename", api.rename).Bind(auth.requireOwner("id"))
	r.POST("/deploy/{id}/pause", api.pause(true)).Bind(auth.requireOwner("id"))
	r.POST("/deploy/{id}/resume", api.pause(false)).Bind(auth.requireOwner("id"))
	r.Any("/deploy/{id}/rename", methodNotAllowed("POST"))
	r.Any("/deploy/{id}/pause", methodNotAllowed("POST"))
	r.Any("/deploy/{id}/resume", methodNotAllowed("POST"))
}

// rename is POST /deploy/:id/rename {"slug": "new-name"}.
func (api *deployAPI) rename(e *core.RequestEvent) error {
	rec := ownedOf(e)
	if err := api.intake.Gate.Keyed.Check(sites.DeploymentOf(rec).OwnerID()); err != nil {
		return err
	}
	var req wire.RenameRequest
	if err := api.intake.Guards.ReadJSON(e.Response, e.Request, renameBodyLimit, &req); err != nil {
		return err
	}
	if req.Slug == nil || *req.Slug == "" {
		return apierr.Fail(http.StatusBadRequest, "slug is required")
	}
	old := sites.DeploymentOf(rec).Slug()
	saved, err := api.deploys.Rename(e.Request.Context(), rec, *req.Slug)
	if err != nil {
		return err
	}
	slug := sites.DeploymentOf(saved).Slug()
	ans := wire.Renamed{DeployRef: wire.DeployRef{ID: saved.Id, Slug: slug, URL: api.links.Site(slug)}}
	if slug != old {
		if r, err := sites.FindSlugRedirect(e.App, old, time.Now()); err == nil {
			ans.PreviousSlug, ans.PreviousURL = old, api.links.Site(old)
			ans.RedirectUntil = timestamp(r.ExpiresAt())
		}
	}
	return e.JSON(http.StatusOK, ans)
}

// pause is POST /deploy/:id/pause (on) and /resume (off). No body is
// read; repeating either changes nothing.
func (api *deployAPI) pause(on bool) func(e *core.RequestEvent) error {
	return func(e *core.RequestEvent) error {
		rec := ownedOf(e)
		if err := api.intake.Gate.Keyed.Check(sites.DeploymentOf(rec).OwnerID()); err != nil {
			return err
		}
		saved, err := api.deploys.SetPaused(e.Request.Context(), rec, on)
		if err != nil {
			return err
		}
		dep := sites.DeploymentOf(saved)
		slug := dep.Slug()
		return e.JSON(http.StatusOK, wire.PauseState{
			DeployRef: wire.DeployRef{ID: saved.Id, Slug: slug, URL: api.links.Site(slug)},
			Paused:    dep.Paused(),
		})
	}
}
