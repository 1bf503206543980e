package hooks

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/pocketbase/pocketbase/core"
)

// openAPIDoc is the OpenAPI 3.1 description of the HTTP API (the README's
// API table), written by hand. Its servers entry is a placeholder: the
// served copy names this server's web URL. The API tests validate every
// answer of a described route against it, and a drift test keeps its
// paths equal to the routes registered.
//
//go:embed openapi.json
var openAPIDoc []byte

// bindOpenAPI serves the description at GET /openapi.json on the web host
// (site hosts never reach the router). The body is built once per serve,
// when the web URL is known.
func bindOpenAPI(sd *sitedrop, se *core.ServeEvent) error {
	body, err := openAPIFor(sd.cfg.links().Web())
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

// openAPIFor is the embedded description with its servers set to webURL.
func openAPIFor(webURL string) ([]byte, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(openAPIDoc, &doc); err != nil {
		return nil, fmt.Errorf("openapi.json: %w", err)
	}
	servers, err := json.Marshal([]map[string]string{{"url": webURL, "description": "this server"}})
	if err != nil {
		return nil, fmt.Errorf("openapi servers: %w", err)
	}
	doc["servers"] = servers
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("openapi.json: %w", err)
	}
	return out, nil
}
