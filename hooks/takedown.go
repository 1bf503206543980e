package hooks

import (
	"net/http"
	"time"

	validation "github.com/pocketbase/ozzo-validation/v4"
	"github.com/pocketbase/pocketbase/apis"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/router"

	"sitedrop/hooks/internal/apierr"
	"sitedrop/sites"
	"sitedrop/sites/wire"
	"sitedrop/ui"
)

// msgTakenDown refuses a write to a taken-down site (a redeploy, a
// rename, a pause or resume, a promote or rollback, a claim).
const msgTakenDown = "This site was taken down by an administrator: it cannot be redeployed, renamed, paused, resumed or promoted until it is restored"

// msgSiteTakenDown answers a form posted to a taken-down site.
const msgSiteTakenDown = "This site was taken down: its forms take no submissions"

// takedownBodyLimit bounds the body of POST /admin/deploy/:id/takedown
// (a reason of sites.MaxTakedownReasonLen runes, escaped, fits).
const takedownBodyLimit = 8 << 10

// bindTakedownHooks puts the takedown's rules where every writer meets
// them (the API, the pages, the MCP tools, the admin dashboard): the
// fields stay consistent (sites.FollowTakedown; a superuser's edit in the
// dashboard records who), a reason is checked, a taken-down site refuses
// the writes that would change what it is or serves (403, also in the
// dashboard), and its owner is mailed when it is taken down or restored
// (a ban's takedowns and restores are mailed as one, by the ban's hook).
// Serving reads the reason from the record (sites.Site.TakenDown), so
// the record hooks' bracket and the publisher carry it to every host and
// to the replicas as any other change.
func bindTakedownHooks(app core.App, cfg *Config) {
	follow := func(e *core.RecordEvent) error {
		sites.FollowTakedown(e.Record, "", time.Now().UTC())
		return e.Next()
	}
	app.OnRecordCreate(sites.DeploymentsCollection).BindFunc(follow)
	app.OnRecordUpdate(sites.DeploymentsCollection).BindFunc(follow)

	// who, for a takedown set in the dashboard (the API's is the
	// service's by)
	app.OnRecordUpdateRequest(sites.DeploymentsCollection).BindFunc(func(e *core.RecordRequestEvent) error {
		d := sites.DeploymentOf(e.Record)
		if e.HasSuperuserAuth() && d.TakedownReason() != "" && d.TakedownReason() != d.Original().TakedownReason() {
			e.Record.Set(sites.FieldTakenDownBy, e.Auth.Email())
		}
		return e.Next()
	})

	app.OnRecordValidate(sites.DeploymentsCollection).BindFunc(func(e *core.RecordEvent) error {
		d := sites.DeploymentOf(e.Record)
		if r := d.TakedownReason(); r != "" && (d.IsNew() || r != d.Original().TakedownReason()) {
			if err := sites.CheckTakedownReason(r); err != nil {
				return validation.Errors{sites.FieldTakedownReason: validation.NewError("validation_invalid_reason", err.Error())}
			}
		}
		return e.Next()
	})

	refuse := func(err error) error {
		if err == nil {
			return nil
		}
		return router.NewForbiddenError(msgTakenDown, err) // errors.Is(ErrTakenDown) still
	}
	app.OnRecordUpdateExecute(sites.DeploymentsCollection).BindFunc(func(e *core.RecordEvent) error {
		if err := refuse(sites.CheckTakenDownWrite(e.Record)); err != nil {
			return err
		}
		return e.Next()
	})
	app.OnRecordCreateExecute(sites.VersionsCollection).BindFunc(func(e *core.RecordEvent) error {
		if err := refuse(sites.CheckNewVersion(e)); err != nil {
			return err
		}
		return e.Next()
	})

	app.OnRecordAfterUpdateSuccess(sites.DeploymentsCollection).BindFunc(func(e *core.RecordEvent) error {
		d := sites.DeploymentOf(e.Record)
		if was, now := d.Original().TakedownReason(), d.TakedownReason(); was != now && (was == "" || now == "") {
			if ban := banSitesOf(e.Context); ban != nil {
				ban.add(d) // a ban's: one mail of them all (mailBan)
			} else if err := mailTakedown(e.App, cfg, d); err != nil {
				e.App.Logger().Error("mail the owner of a takedown", "deployment", e.Record.Id, "error", err)
			}
		}
		return e.Next()
	})
}

// mailTakedown tells the owner of d, if it has one, that it was taken
// down (with the reason) or restored.
func mailTakedown(app core.App, cfg *Config, d *sites.Deployment) error {
	if d.OwnerID() == "" {
		return nil // an anonymous site: no one to tell
	}
	owner, err := sites.FindUser(app, d.OwnerID())
	if err != nil || owner.Email() == "" {
		return err
	}
	links := cfg.links()
	p := ui.TakedownMailProps{
		Slug: d.Slug(), SiteURL: links.Site(d.Slug()), Reason: d.TakedownReason(),
		PageURL: links.Web() + ui.TabPath(d.Id, ui.TabOverview), WebURL: links.Web(),
	}
	return sendMail(app, owner.Email(), ui.TakedownMailSubject(p), ui.TakedownMail(p), ui.TakedownText(p))
}

// bindTakedownAPI binds the superusers' takedown of a site: POST
// /admin/deploy/:id/takedown {"reason"} and POST
// /admin/deploy/:id/restore, with a superuser's auth token only (401
// without one, 403 with an account's), each counted against the
// superuser's deploys per minute.
func bindTakedownAPI(r *router.Router[*core.RequestEvent], api *deployAPI) {
	r.POST("/admin/deploy/{id}/takedown", api.takedown).Bind(apis.RequireSuperuserAuth())
	r.POST("/admin/deploy/{id}/restore", api.restore).Bind(apis.RequireSuperuserAuth())
	r.Any("/admin/deploy/{id}/takedown", methodNotAllowed("POST"))
	r.Any("/admin/deploy/{id}/restore", methodNotAllowed("POST"))
}

// takedownTarget is the deployment the admin route names, once the
// superuser's rate allows.
func (api *deployAPI) takedownTarget(e *core.RequestEvent) (*core.Record, error) {
	if err := api.intake.Gate.Keyed.Check(e.Auth.Id); err != nil {
		return nil, err
	}
	dep, err := sites.FindDeployment(e.App, e.Request.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return dep.Record, nil
}

// takedown is POST /admin/deploy/:id/takedown {"reason": "..."}; taking
// a taken-down site down again changes its reason.
func (api *deployAPI) takedown(e *core.RequestEvent) error {
	rec, err := api.takedownTarget(e)
	if err != nil {
		return err
	}
	var req wire.TakedownRequest
	if err := api.intake.Guards.ReadJSON(e.Response, e.Request, takedownBodyLimit, &req); err != nil {
		return err
	}
	if req.Reason == nil {
		return apierr.Fail(http.StatusBadRequest, "reason is required")
	}
	saved, err := api.deploys.TakeDown(e.Request.Context(), rec, *req.Reason, e.Auth.Email())
	if err != nil {
		return err
	}
	return e.JSON(http.StatusOK, api.takedownState(saved))
}

// restore is POST /admin/deploy/:id/restore; restoring a site that is
// not taken down changes nothing.
func (api *deployAPI) restore(e *core.RequestEvent) error {
	rec, err := api.takedownTarget(e)
	if err != nil {
		return err
	}
	saved, err := api.deploys.Restore(e.Request.Context(), rec)
	if err != nil {
		return err
	}
	return e.JSON(http.StatusOK, api.takedownState(saved))
}

// takedownState is the answer of both admin routes.
func (api *deployAPI) takedownState(rec *core.Record) wire.TakedownState {
	d := sites.DeploymentOf(rec)
	s := wire.TakedownState{
		DeployRef: wire.DeployRef{ID: rec.Id, Slug: d.Slug(), URL: api.links.Site(d.Slug())},
		TakenDown: d.TakenDown(), Reason: d.TakedownReason(), TakenDownBy: d.TakenDownBy(),
	}
	if t := d.TakenDownAt(); !t.IsZero() {
		s.TakenDownAt = timestamp(t)
	}
	return s
}
