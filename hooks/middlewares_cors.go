package hooks

import (
	"net/http"
	"strings"

	"github.com/pocketbase/pocketbase/apis"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/hook"

	"sitedrop/hooks/server"
)

// corsMiddleware is the CORS policy of the web host:
//   - PocketBase's API and dashboard (/api/, /_/) keep PocketBase's CORS
//     with the origins list (--origins);
//   - /submit/ sets its own headers (any origin may post a form);
//   - sitedrop's other routes answer a browser's cross-origin request
//     (one with an Origin) by server.KeyedCORS: any origin, with a key
//     only.
func corsMiddleware(origins []string) *hook.Handler[*core.RequestEvent] {
	pb := apis.CORS(apis.CORSConfig{
		AllowOrigins: origins,
		AllowMethods: strings.Split(strings.ReplaceAll(server.CORSMethods, " ", ""), ","),
	})
	return &hook.Handler[*core.RequestEvent]{
		Id:       corsMiddlewareId,
		Priority: corsMiddlewarePriority,
		Func: func(e *core.RequestEvent) error {
			p := e.Request.URL.Path
			switch {
			case strings.HasPrefix(p, "/api/") || p == "/_" || strings.HasPrefix(p, "/_/"):
				return pb.Func(e)
			case strings.HasPrefix(p, "/submit/"):
				return e.Next()
			}
			if e.Request.Header.Get("Origin") == "" {
				return e.Next() // not a browser's cross-origin request
			}
			tok, _ := bearerToken(e.Request)
			if server.KeyedCORS(e.Request, e.Response.Header(), tok != "") {
				return e.NoContent(http.StatusNoContent)
			}
			return e.Next()
		},
	}
}
