package hooks

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestOpenAPIServed: the description answers on the web host as JSON,
// with this server's web URL, an ETag and no-cache; a site host never
// serves it.
func TestOpenAPIServed(t *testing.T) {
	app, _ := newFixtureApp(t)
	defer app.Cleanup()
	mux := newMux(t, app)

	res, body := do(t, mux, http.MethodGet, "http://web.test/openapi.json", "", nil)
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET /openapi.json: %d %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	var doc struct {
		OpenAPI string `json:"openapi"`
		Servers []struct {
			URL string `json:"url"`
		} `json:"servers"`
		Paths map[string]any `json:"paths"`
	}
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1.") || len(doc.Servers) != 1 || doc.Servers[0].URL != "http://web.test" {
		t.Errorf("openapi %q, servers %+v", doc.OpenAPI, doc.Servers)
	}
	if doc.Paths["/deploy"] == nil {
		t.Error("no /deploy in the description")
	}
	etag := res.Header.Get("ETag")
	if etag == "" || res.Header.Get("Cache-Control") != "no-cache" {
		t.Errorf("ETag %q, Cache-Control %q", etag, res.Header.Get("Cache-Control"))
	}
	res, _ = do(t, mux, http.MethodGet, "http://web.test/openapi.json", "", map[string]string{"If-None-Match": etag})
	if res.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match: %d, want 304", res.StatusCode)
	}
	res, _ = do(t, mux, http.MethodPost, "http://web.test/openapi.json", "", nil)
	if res.StatusCode != http.StatusMethodNotAllowed || res.Header.Get("Allow") != "GET" {
		t.Errorf("POST /openapi.json: %d, Allow %q", res.StatusCode, res.Header.Get("Allow"))
	}
	res, body = do(t, mux, http.MethodGet, "http://alice-site.sites.test/openapi.json", "", nil)
	if res.StatusCode != http.StatusNotFound || strings.Contains(body, "openapi") {
		t.Errorf("a site host answered /openapi.json: %d %.80q", res.StatusCode, body)
	}
}

// TestOpenAPIDescriptionValid: openapi.json is a valid OpenAPI 3.1
// document to kin-openapi.
func TestOpenAPIDescriptionValid(t *testing.T) {
	doc, _ := loadOpenAPI(t)
	if !doc.IsOpenAPI31OrLater() {
		t.Errorf("openapi %q, want 3.1", doc.OpenAPI)
	}
}
