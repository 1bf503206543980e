package hooks

import (
	"net/http"

	"github.com/pocketbase/pocketbase/apis"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/hook"

	"sitedrop/sites"
)

// siteHostPriority runs the site-host split before every PocketBase
// middleware (the www redirect included), so site traffic never meets the
// API, the admin UI, CORS, auth cookies or the activity log.
const siteHostPriority = apis.DefaultWWWRedirectMiddlewarePriority - 1

// bindSiteHost serves <slug>.<sites-domain> requests from the site server
// and never lets them reach PocketBase's routes.
func bindSiteHost(sd *sitedrop, se *core.ServeEvent) {
	se.Router.Bind(&hook.Handler[*core.RequestEvent]{
		Id:       "sitedropSiteHost",
		Priority: siteHostPriority,
		Func: func(e *core.RequestEvent) error {
			slug, isSite := sites.SlugFromHost(e.Request.Host, sd.cfg.SitesDomain)
			if !isSite {
				return e.Next()
			}
			defer func() {
				// PocketBase's panic recovery runs after this middleware.
				if r := recover(); r != nil {
					e.App.Logger().Error("site handler panic", "host", e.Request.Host, "panic", r)
					if !e.Written() {
						http.Error(e.Response, "Internal error", http.StatusInternalServerError)
					}
				}
			}()
			sd.server.ServeSite(e.Response, e.Request, slug)
			return nil
		},
	})
}
