package hooks

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	validation "github.com/pocketbase/ozzo-validation/v4"
	"github.com/pocketbase/pocketbase/apis"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/router"

	"sitedrop/hooks/internal/apierr"
	"sitedrop/sites"
	"sitedrop/sites/accounts"
	"sitedrop/sites/audit"
	"sitedrop/sites/wire"
	"sitedrop/ui"
)

// msgUserNotFound answers an admin route naming no account.
const msgUserNotFound = "User not found"

// msgBanned refuses a banned account's sign-in, API key or session
// (with the ban's reason).
const msgBanned = "This account is banned: %s"

// banBodyLimit bounds the body of POST /admin/users/:id/ban.
const banBodyLimit = takedownBodyLimit

// bindBanHooks puts the ban's rules where every writer meets them (the
// admin API and PocketBase's dashboard): the fields stay consistent
// (accounts.FollowBan; a superuser's edit in the dashboard records who),
// a reason is checked, and a saved change of the ban takes the account's
// sites down or restores them (sites.Service.FollowBan), is logged
// (audit.ActionBan, audit.ActionUnban) and mailed to the account: one
// mail listing the sites it took down or restored (mailBan), not a
// takedown notice per site. The refusals of the banned
// account's sign-in, keys and sessions read the record itself
// (accounts.CheckNotBanned), so they hold from the next request on.
func bindBanHooks(app core.App, cfg *Config, svc *sites.Service) {
	follow := func(e *core.RecordEvent) error {
		accounts.FollowBan(e.Record, "", time.Now().UTC())
		return e.Next()
	}
	app.OnRecordCreate(accounts.UsersCollection).BindFunc(follow)
	app.OnRecordUpdate(accounts.UsersCollection).BindFunc(follow)

	app.OnRecordUpdateRequest(accounts.UsersCollection).BindFunc(func(e *core.RecordRequestEvent) error {
		u := accounts.UserOf(e.Record)
		if e.HasSuperuserAuth() && u.Banned() && u.BannedReason() != accounts.UserOf(e.Record.Original()).BannedReason() {
			e.Record.Set(accounts.FieldBannedBy, e.Auth.Email())
		}
		return e.Next()
	})

	app.OnRecordValidate(accounts.UsersCollection).BindFunc(func(e *core.RecordEvent) error {
		u := accounts.UserOf(e.Record)
		if r := u.BannedReason(); r != "" && (e.Record.IsNew() || r != accounts.UserOf(e.Record.Original()).BannedReason()) {
			if err := sites.CheckBanReason(r); err != nil {
				return validation.Errors{accounts.FieldBannedReason: validation.NewError("validation_invalid_reason", err.Error())}
			}
		}
		return e.Next()
	})

	app.OnRecordAfterUpdateSuccess(accounts.UsersCollection).BindFunc(func(e *core.RecordEvent) error {
		orig, u := accounts.UserOf(e.Record.Original()), accounts.UserOf(e.Record)
		if orig.Banned() == u.Banned() && orig.BannedReason() == u.BannedReason() {
			return e.Next()
		}
		ent := audit.Entry{Action: audit.ActionBan, Kind: audit.TargetUser, Target: u.Id, Owner: u.Id,
			Details: map[string]any{"reason": u.BannedReason()}}
		if !u.Banned() {
			ent.Action, ent.Details = audit.ActionUnban, map[string]any{}
		}
		if err := audit.Record(e.Context, e.App, ent); err != nil {
			e.App.Logger().Error("audit: entry not written", "action", ent.Action, "target", u.Id, "error", err)
		}
		ctx, changed := withBanSites(e.Context)
		if _, err := svc.FollowBan(ctx, e.Record.Original(), e.Record); err != nil {
			e.App.Logger().Error("follow a ban on the account's sites", "user", u.Id, "error", err)
		}
		if err := mailBan(e.App, cfg, e.Record, changed.list()); err != nil {
			e.App.Logger().Error("mail the owner of a ban", "user", u.Id, "error", err)
		}
		return e.Next()
	})
}

// banSitesKey is the context key under which a ban's hook collects the
// sites its FollowBan takes down or restores (banSites): the takedown
// hook leaves their mail to the ban's.
type banSitesKey struct{}

// banSites are the sites one change of a ban took down or restored, in
// the order they were saved.
type banSites struct {
	mu    sync.Mutex
	sites []*sites.Deployment
}

// withBanSites is ctx carrying an empty banSites.
func withBanSites(ctx context.Context) (context.Context, *banSites) {
	if ctx == nil {
		ctx = context.Background()
	}
	b := &banSites{}
	return context.WithValue(ctx, banSitesKey{}, b), b
}

// banSitesOf is the banSites ctx carries, nil outside a ban's change.
func banSitesOf(ctx context.Context) *banSites {
	if ctx == nil {
		return nil
	}
	b, _ := ctx.Value(banSitesKey{}).(*banSites)
	return b
}

func (b *banSites) add(d *sites.Deployment) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sites = append(b.sites, d)
}

func (b *banSites) list() []*sites.Deployment {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.sites)
}

// mailBan tells the account user, in one mail, that it was banned and
// which of its sites were taken down, or that the ban was lifted and
// which were restored; nothing when no site changed.
func mailBan(app core.App, cfg *Config, user *core.Record, changed []*sites.Deployment) error {
	if len(changed) == 0 || user.Email() == "" {
		return nil
	}
	links := cfg.links()
	p := ui.BanMailProps{Reason: accounts.UserOf(user).BannedReason(), AccountURL: links.Web() + "/account", WebURL: links.Web()}
	for _, d := range changed {
		p.Sites = append(p.Sites, ui.BanMailSite{Slug: d.Slug(), SiteURL: links.Site(d.Slug())})
	}
	return sendMail(app, user.Email(), ui.BanMailSubject(p), ui.BanMail(p), ui.BanText(p))
}

// bindBanAPI binds the superusers' ban of an account: POST
// /admin/users/:id/ban {"reason"} and POST /admin/users/:id/unban, with a
// superuser's auth token only (401 without one, 403 with an account's),
// each counted against the superuser's deploys per minute.
func bindBanAPI(r *router.Router[*core.RequestEvent], api *deployAPI) {
	r.POST("/admin/users/{id}/ban", api.ban).Bind(apis.RequireSuperuserAuth())
	r.POST("/admin/users/{id}/unban", api.unban).Bind(apis.RequireSuperuserAuth())
	r.Any("/admin/users/{id}/ban", methodNotAllowed("POST"))
	r.Any("/admin/users/{id}/unban", methodNotAllowed("POST"))
}

// banTarget is the account the admin route names, once the superuser's
// rate allows.
func (api *deployAPI) banTarget(e *core.RequestEvent) (*core.Record, error) {
	if err := api.intake.Gate.Keyed.Check(e.Auth.Id); err != nil {
		return nil, err
	}
	return sites.FindUser(e.App, e.Request.PathValue("id"))
}

// ban is POST /admin/users/:id/ban {"reason": "..."}; banning a banned
// account again changes its reason.
func (api *deployAPI) ban(e *core.RequestEvent) error {
	user, err := api.banTarget(e)
	if err != nil {
		return err
	}
	var req wire.BanRequest
	if err := api.intake.Guards.ReadJSON(e.Response, e.Request, banBodyLimit, &req); err != nil {
		return err
	}
	if req.Reason == nil {
		return apierr.Fail(http.StatusBadRequest, "reason is required")
	}
	saved, err := api.deploys.Ban(e.Request.Context(), user, *req.Reason, e.Auth.Email())
	if err != nil {
		return err
	}
	return e.JSON(http.StatusOK, banState(saved))
}

// unban is POST /admin/users/:id/unban; unbanning an account that is not
// banned changes nothing.
func (api *deployAPI) unban(e *core.RequestEvent) error {
	user, err := api.banTarget(e)
	if err != nil {
		return err
	}
	saved, err := api.deploys.Unban(e.Request.Context(), user)
	if err != nil {
		return err
	}
	return e.JSON(http.StatusOK, banState(saved))
}

// banState is the answer of both admin routes.
func banState(rec *core.Record) wire.BanState {
	u := accounts.UserOf(rec)
	s := wire.BanState{ID: rec.Id, Email: rec.Email(), Banned: u.Banned(), Reason: u.BannedReason(), BannedBy: u.BannedBy()}
	if t := u.BannedAt(); !t.IsZero() {
		s.BannedAt = timestamp(t)
	}
	return s
}

// bannedAPIError is the API's answer to a banned account (403, with the
// ban's reason).
func bannedAPIError(be *accounts.BannedError) *apierr.Error {
	return apierr.Fail(http.StatusForbidden, "%s", fmt.Sprintf(msgBanned, be.Reason))
}
