package hooks

import (
	"github.com/pocketbase/pocketbase/apis"
	"github.com/pocketbase/pocketbase/core"
)

// sitedrop's router middlewares, one a file (middlewares_*.go), as
// PocketBase's apis/middlewares.go: their ids and their priorities, which
// place them among PocketBase's own (a lower priority runs first).
const (
	// superuserSignInLimitMiddlewareId runs just before PocketBase's rate
	// limiter (see superuserSignInLimit).
	superuserSignInLimitMiddlewareId       = "sitedropSuperuserSignInLimit"
	superuserSignInLimitMiddlewarePriority = apis.DefaultRateLimitMiddlewarePriority - 1

	// corsMiddlewareId replaces PocketBase's CORS, where it ran: before
	// the activity log and the rate limiter, so that preflights are
	// neither logged nor counted.
	corsMiddlewareId       = "sitedropCORS"
	corsMiddlewarePriority = apis.DefaultCorsMiddlewarePriority

	// jsonErrorsMiddlewareId (errors.go) and logRedactMiddlewareId run
	// just inside the activity logger, in the order they are bound: the
	// logger reads the request after them, redacted (see
	// logRedactMiddleware).
	jsonErrorsMiddlewareId       = "sitedropJSONErrors"
	jsonErrorsMiddlewarePriority = apis.DefaultActivityLoggerMiddlewarePriority + 1
	logRedactMiddlewareId        = "sitedropLogRedact"
	logRedactMiddlewarePriority  = apis.DefaultActivityLoggerMiddlewarePriority + 1

	// anonCrossOriginMiddlewareId runs inside the JSON errors middleware,
	// so its refusal is {"error": "..."}.
	anonCrossOriginMiddlewareId       = "sitedropAnonCrossOrigin"
	anonCrossOriginMiddlewarePriority = apis.DefaultActivityLoggerMiddlewarePriority + 2

	// deployMetricsMiddlewareId (middlewares_metrics.go) runs just
	// outside the JSON errors middleware, so it sees the status a
	// deploy's error was answered with.
	deployMetricsMiddlewareId       = "sitedropDeployMetrics"
	deployMetricsMiddlewarePriority = jsonErrorsMiddlewarePriority - 1

	// adminNotFoundMiddlewareId (middlewares_admin_notfound.go) runs where the JSON
	// errors middleware does, which leaves /_/ alone: it turns the admin
	// dashboard's 404 into the styled page for browsers.
	adminNotFoundMiddlewareId       = "sitedropAdminNotFoundPage"
	adminNotFoundMiddlewarePriority = jsonErrorsMiddlewarePriority

	// hstsMiddlewareId has the default priority: it only sets a header.
	hstsMiddlewareId = "sitedropHSTS"
)

// bindWebGuards replaces PocketBase's global CORS middleware (which
// answers "Access-Control-Allow-Origin: *" on every route) with sitedrop's
// policy (origins: --origins, for PocketBase's API and dashboard), refuses
// anonymous deploys from pages of other origins, and keeps secrets out of
// the request log.
func bindWebGuards(se *core.ServeEvent, origins []string) {
	se.Router.Unbind(apis.DefaultCorsMiddlewareId)
	se.Router.Bind(corsMiddleware(origins))
	se.Router.Bind(anonCrossOriginGuard())
	se.Router.Bind(logRedactMiddleware())
}
