package hooks

import (
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/hook"

	"sitedrop/hooks/server"
)

// bindHSTS sends Strict-Transport-Security (server.HSTS) on every web
// host answer when overTLS reports the web host reached over https
// (--https, or an https --public-url behind a proxy). Site hosts never
// reach the router, so sites are not affected.
func bindHSTS(se *core.ServeEvent, overTLS func() bool) {
	se.Router.Bind(&hook.Handler[*core.RequestEvent]{
		Id: hstsMiddlewareId,
		Func: func(e *core.RequestEvent) error {
			if overTLS() {
				e.Response.Header().Set("Strict-Transport-Security", server.HSTS)
			}
			return e.Next()
		},
	})
}
