package hooks

import (
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/hook"
)

// hstsValue asks browsers to use https for the web host for two years.
// Not includeSubDomains: the web host's parent domain may hold other
// services the self-hoster runs over plain HTTP.
const hstsValue = "max-age=63072000"

// bindHSTS sends Strict-Transport-Security on every web host answer when
// the web host is reached over https (--https, or an https --public-url
// behind a proxy). Site hosts never reach the router, so sites are not
// affected.
func bindHSTS(sd *sitedrop, se *core.ServeEvent) {
	se.Router.Bind(&hook.Handler[*core.RequestEvent]{
		Id: "sitedropHSTS",
		Func: func(e *core.RequestEvent) error {
			if sd.sessions.Secure() {
				e.Response.Header().Set("Strict-Transport-Security", hstsValue)
			}
			return e.Next()
		},
	})
}
