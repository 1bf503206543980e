package hooks

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites/wire"
)

// bindOpenAPI serves the API's description (wire.OpenAPIFor), naming
// webURL, at GET /openapi.json on the web host (site hosts never reach
// the router). The body is built once per serve, when the web URL is
// known.
func bindOpenAPI(se *core.ServeEvent, webURL string) error {
	body, err := wire.OpenAPIFor(webURL)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:16]) + `"`
	se.Router.GET("/openapi.json", func(e *core.RequestEvent) error {
		h := e.Response.Header()
		h.Set("ETag", etag)
		h.Set("Cache-Control", "no-cache")
		if e.Request.Header.Get("If-None-Match") == etag {
			return e.NoContent(http.StatusNotModified)
		}
		return e.Blob(http.StatusOK, "application/json", body)
	})
	se.Router.Any("/openapi.json", methodNotAllowed("GET"))
	return nil
}
