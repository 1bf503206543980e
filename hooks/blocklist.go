package hooks

import (
	"errors"
	"net/http"

	validation "github.com/pocketbase/ozzo-validation/v4"
	"github.com/pocketbase/pocketbase/apis"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/router"

	"sitedrop/hooks/internal/apierr"
	"sitedrop/sites"
	"sitedrop/sites/intake"
	"sitedrop/sites/wire"
)

// blockBodyLimit bounds the small JSON body of POST /admin/blocklist.
const blockBodyLimit = 16 << 10

// bindBlocklistHooks puts the blocklist's rules where every writer meets
// them (the admin API and the dashboard): a value is checked and
// normalised before it is saved, a block added in the dashboard names
// its superuser, and every change is read into blocks at once, so the
// next deploy, upload or sign-up meets it.
func bindBlocklistHooks(app core.App, blocks *sites.Blocklist) {
	app.OnRecordValidate(sites.BlocklistCollection).BindFunc(func(e *core.RecordEvent) error {
		if err := sites.NormalizeBlockRecord(e.Record); err != nil {
			var fe *sites.FieldError
			if errors.As(err, &fe) {
				return validation.Errors{fe.Field: validation.NewError("validation_invalid_block", fe.Msg)}
			}
			return err
		}
		return e.Next()
	})
	app.OnRecordCreateRequest(sites.BlocklistCollection).BindFunc(func(e *core.RecordRequestEvent) error {
		if e.Auth != nil && e.Auth.IsSuperuser() && e.Record.GetString(sites.FieldBlockCreatedBy) == "" {
			e.Record.Set(sites.FieldBlockCreatedBy, e.Auth.Email())
		}
		return e.Next()
	})
	reload := func(e *core.RecordEvent) error {
		if err := blocks.Reload(); err != nil {
			e.App.Logger().Error("blocklist reload", "error", err)
		}
		return e.Next()
	}
	app.OnRecordAfterCreateSuccess(sites.BlocklistCollection).BindFunc(reload)
	app.OnRecordAfterUpdateSuccess(sites.BlocklistCollection).BindFunc(reload)
	app.OnRecordAfterDeleteSuccess(sites.BlocklistCollection).BindFunc(reload)
}

// blocklistAPI serves the admin's blocklist endpoints.
type blocklistAPI struct {
	blocks *sites.Blocklist
	guards *intake.Guards
}

// bindBlocklistAPI binds the blocklist's admin API: list, add, remove.
// Superusers only (PocketBase's superuser auth token).
func bindBlocklistAPI(r *router.Router[*core.RequestEvent], api *blocklistAPI) {
	r.GET("/admin/blocklist", api.list).Bind(apis.RequireSuperuserAuth())
	r.POST("/admin/blocklist", api.add).Bind(apis.RequireSuperuserAuth())
	r.DELETE("/admin/blocklist/{id}", api.remove).Bind(apis.RequireSuperuserAuth())
	r.Any("/admin/blocklist", methodNotAllowed("GET, POST"))
	r.Any("/admin/blocklist/{id}", methodNotAllowed("DELETE"))
}

// list is GET /admin/blocklist[?kind=...].
func (api *blocklistAPI) list(e *core.RequestEvent) error {
	bs, err := api.blocks.List(e.Request.URL.Query().Get("kind"))
	if err != nil {
		return err
	}
	out := wire.BlockList{Blocks: make([]wire.Block, 0, len(bs))}
	for _, b := range bs {
		out.Blocks = append(out.Blocks, blockJSON(b))
	}
	return e.JSON(http.StatusOK, out)
}

// add is POST /admin/blocklist {kind, value, note}.
func (api *blocklistAPI) add(e *core.RequestEvent) error {
	var req wire.BlockRequest
	if err := api.guards.ReadJSON(e.Response, e.Request, blockBodyLimit, &req); err != nil {
		return err
	}
	if req.Kind == nil || *req.Kind == "" {
		return apierr.Fail(http.StatusBadRequest, "kind is required")
	}
	if req.Value == nil || *req.Value == "" {
		return apierr.Fail(http.StatusBadRequest, "value is required")
	}
	note := ""
	if req.Note != nil {
		note = *req.Note
	}
	b, err := api.blocks.Add(e.Request.Context(), *req.Kind, *req.Value, note, e.Auth)
	if err != nil {
		return err
	}
	return e.JSON(http.StatusOK, blockJSON(b))
}

// remove is DELETE /admin/blocklist/{id}.
func (api *blocklistAPI) remove(e *core.RequestEvent) error {
	b, err := api.blocks.Remove(e.Request.Context(), e.Request.PathValue("id"))
	if err != nil {
		return err
	}
	return e.JSON(http.StatusOK, blockJSON(b))
}

// blockJSON is a block as the admin API answers it.
func blockJSON(b *sites.Block) wire.Block {
	return wire.Block{
		ID: b.Id, Kind: b.Kind(), Value: b.Value(), Note: b.Note(),
		CreatedBy: b.CreatedBy(), CreatedAt: timestamp(b.GetDateTime(sites.FieldBlockCreated).Time()),
	}
}

// Messages of the blocklist's admin API.
const (
	msgBlockNotFound  = "Block not found"
	msgAlreadyBlocked = "Already blocked"
)

// blocklistAPIError maps the blocklist's refusals: 403 for blocked
// content, a blocked redirect target or a blocked sign-up domain (the
// message says which), 404 and 409 for the admin API.
func blocklistAPIError(err error) (*apierr.Error, bool) {
	var (
		bc *sites.BlockedContentError
		bt *sites.BlockedTargetError
		be *sites.BlockedEmailDomainError
	)
	switch {
	case errors.As(err, &bc):
		return apierr.Fail(http.StatusForbidden, "%s", bc.Error()), true
	case errors.As(err, &bt):
		return apierr.Fail(http.StatusForbidden, "%s", bt.Error()), true
	case errors.As(err, &be):
		return apierr.Fail(http.StatusForbidden, "%s", be.Error()), true
	case errors.Is(err, sites.ErrBlockNotFound):
		return apierr.Fail(http.StatusNotFound, msgBlockNotFound), true
	case errors.Is(err, sites.ErrAlreadyBlocked):
		return apierr.Fail(http.StatusConflict, msgAlreadyBlocked), true
	}
	return nil, false
}
