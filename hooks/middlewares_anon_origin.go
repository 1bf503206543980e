package hooks

import (
	"net/http"
	"sitedrop/hooks/internal/apierr"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/hook"
)

// anonymousRoutes are the routes that act without a key. A browser sends
// a simple POST (text/plain, form data) across origins without asking, so
// a page on another origin could make its visitors use them.
var anonymousRoutes = map[string]bool{
	"POST /deploy": true,
	"/mcp":         true, // an anonymous deploy through MCP
}

// anonCrossOriginGuard refuses, with 403, a request to an anonymousRoutes
// route that carries no Authorization header and that a browser sends from
// a page of another origin (Sec-Fetch-Site, else Origin against Host, as
// http.CrossOriginProtection decides; a site host is another origin).
// curl and scripts send neither header and keep deploying anonymously.
func anonCrossOriginGuard() *hook.Handler[*core.RequestEvent] {
	return &hook.Handler[*core.RequestEvent]{
		Id:       anonCrossOriginMiddlewareId,
		Priority: anonCrossOriginMiddlewarePriority,
		Func: func(e *core.RequestEvent) error {
			if !anonymousRoutes[e.Request.Pattern] {
				return e.Next()
			}
			if _, sent := bearerToken(e.Request); sent {
				return e.Next()
			}
			if crossOrigin.Check(e.Request) != nil {
				return apierr.Fail(http.StatusForbidden, msgCrossOriginAnonDeploy)
			}
			return e.Next()
		},
	}
}
