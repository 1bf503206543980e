package hooks

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"sync"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites/wire"
)

// bindOpenAPI serves the API's description (wire.OpenAPIFor), naming
// webURL, at GET /openapi.json on the web host (site hosts never reach
// the router). The body is built on the first request (openAPIBody), not
// at start: an idle server holds neither the description's copy nor its
// parse.
func bindOpenAPI(se *core.ServeEvent, webURL string) error {
	doc := &openAPIBody{webURL: webURL}
	se.Router.GET("/openapi.json", func(e *core.RequestEvent) error {
		body, etag, err := doc.get()
		if err != nil {
			return err
		}
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

// openAPIBody is the description naming one web URL and its ETag, built
// once, on first use, by whichever request comes first; safe for
// concurrent use. Building it parses and re-encodes the embedded 140 KB
// document (half a megabyte of allocations): idle servers, which most
// are, never pay for it.
type openAPIBody struct {
	webURL string

	once sync.Once
	body []byte
	etag string
	err  error
}

// get is the body and its ETag, built on the first call.
func (d *openAPIBody) get() (body []byte, etag string, err error) {
	d.once.Do(func() {
		d.body, d.err = wire.OpenAPIFor(d.webURL)
		if d.err != nil {
			d.err = fmt.Errorf("build openapi.json: %w", d.err)
			return
		}
		sum := sha256.Sum256(d.body)
		d.etag = `"` + hex.EncodeToString(sum[:16]) + `"`
	})
	return d.body, d.etag, d.err
}
