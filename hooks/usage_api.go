package hooks

import (
	"net/http"
	"strconv"
	"time"

	"github.com/pocketbase/pocketbase/apis"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/router"

	"sitedrop/hooks/internal/apierr"
	"sitedrop/sites/usage"
	"sitedrop/sites/wire"
)

// Messages of the usage endpoints.
const msgUsageTop = "top must be a whole number from 1 to 100"

// defaultUsageTop is GET /admin/usage's top without ?top=.
const defaultUsageTop = 20

// usageAPI serves GET /usage (the caller's) and GET /admin/usage (every
// account's, superusers only).
type usageAPI struct {
	usage *usage.Service
}

// bindUsageAPI binds the usage endpoints.
func bindUsageAPI(r *router.Router[*core.RequestEvent], api *usageAPI, auth *apiAuth) {
	r.GET("/usage", api.mine).Bind(auth.requireUser())
	r.Any("/usage", methodNotAllowed("GET"))
	r.GET("/admin/usage", api.all).Bind(apis.RequireSuperuserAuth())
	r.Any("/admin/usage", methodNotAllowed("GET"))
}

// mine is GET /usage: the caller's usage.
func (api *usageAPI) mine(e *core.RequestEvent) error {
	a, err := api.usage.Usage(userOf(e), time.Now())
	if err != nil {
		return err
	}
	return e.JSON(http.StatusOK, usageJSON(a))
}

// all is GET /admin/usage?top=N: the top accounts and sites by bytes
// served over usage.Days days.
func (api *usageAPI) all(e *core.RequestEvent) error {
	top := defaultUsageTop
	if s := e.Request.URL.Query().Get("top"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > usage.MaxTop {
			return apierr.Fail(http.StatusBadRequest, msgUsageTop)
		}
		top = n
	}
	now := time.Now()
	accs, err := api.usage.TopAccounts(top, now)
	if err != nil {
		return err
	}
	ss, err := api.usage.TopSites(top, usage.Since(now))
	if err != nil {
		return err
	}
	out := wire.AdminUsage{Since: usage.Since(now).Format(time.DateOnly), Days: usage.Days,
		Accounts: make([]wire.AccountUsage, 0, len(accs)), Sites: make([]wire.SiteUsage, 0, len(ss))}
	for _, a := range accs {
		out.Accounts = append(out.Accounts, wire.AccountUsage{ID: a.Owner, Email: a.Email, Usage: usageJSON(a)})
	}
	for _, s := range ss {
		out.Sites = append(out.Sites, wire.SiteUsage{ID: s.ID, Slug: s.Slug, Owner: s.Owner, PageViews: s.PageViews, BytesServed: s.BytesServed})
	}
	return e.JSON(http.StatusOK, out)
}

// usageJSON is an account's usage as the API answers it.
func usageJSON(a usage.Account) wire.Usage {
	return wire.Usage{
		Plan: a.Plan, Sites: a.Sites, StorageBytes: a.StorageBytes,
		PageViews: a.PageViews, BytesServed: a.BytesServed,
		Since: a.Since.Format(time.DateOnly), Days: usage.Days,
		Limits: wire.UsageLimits{Sites: a.Limits.Sites, VersionsPerSite: a.Limits.VersionsPerSite},
	}
}
