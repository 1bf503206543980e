package hooks

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestDeployServesPrecompressed: a deploy through the API stores
// precompressed variants of compressible files, the collector keeps them,
// and the server sends them to clients that accept them; a PUT is seen on
// the next request.
func TestDeployServesPrecompressed(t *testing.T) {
	app, sd := newFixtureApp(t, func(c *Config) { c.MaxBody = 1 << 20 })
	mux := newMux(t, app)
	page := "<!doctype html><title>big</title>" + strings.Repeat("<p>compress me, please</p>\n", 300)
	body, _ := json.Marshal(map[string]any{"files": []map[string]string{
		{"path": "index.html", "content": page},
		{"path": "assets/app-B7x_k2Qa.js", "content": strings.Repeat("console.log(1);\n", 200)},
	}})
	if res, b := do(t, mux, http.MethodPut, "/deploy/"+idAliceSite, string(body), bearer(keyAlice)); res.StatusCode != 200 {
		t.Fatalf("PUT: %d %s", res.StatusCode, b)
	}
	if _, err := sd.svc.CollectGarbage(context.Background(), 0); err != nil {
		t.Fatal(err)
	}

	fetch := func(path, accept string) *http.Response {
		req := httptest.NewRequest(http.MethodGet, "http://alice-site.sites.test"+path, nil)
		if accept != "" {
			req.Header.Set("Accept-Encoding", accept)
		}
		rec := httptest.NewRecorder()
		sd.server.ServeSite(rec, req, "alice-site")
		return rec.Result()
	}
	res := fetch("/", "gzip")
	if res.StatusCode != 200 || res.Header.Get("Content-Encoding") != "gzip" || res.Header.Get("Vary") != "Accept-Encoding" {
		t.Fatalf("gzip page: %d %q %q", res.StatusCode, res.Header.Get("Content-Encoding"), res.Header.Get("Vary"))
	}
	zr, err := gzip.NewReader(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(zr)
	if !strings.Contains(string(got), "compress me, please") || !strings.Contains(string(got), "<title>big</title>") {
		t.Fatalf("decompressed page: %.80q", got)
	}
	if res := fetch("/", "br"); res.Header.Get("Content-Encoding") != "br" || res.Header.Get("Cache-Control") != "no-cache" {
		t.Errorf("br page: %q %q", res.Header.Get("Content-Encoding"), res.Header.Get("Cache-Control"))
	}
	if res := fetch("/assets/app-B7x_k2Qa.js", "zstd, br"); res.Header.Get("Content-Encoding") != "br" ||
		res.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" {
		t.Errorf("fingerprinted script: %q %q", res.Header.Get("Content-Encoding"), res.Header.Get("Cache-Control"))
	}
	// no zstd variant is stored when brotli's is smaller: a client that
	// accepts zstd alone gets the file as it is
	if res := fetch("/assets/app-B7x_k2Qa.js", "zstd"); res.Header.Get("Content-Encoding") != "" {
		t.Errorf("zstd-only client: Content-Encoding %q, want none", res.Header.Get("Content-Encoding"))
	}

	// A PUT replaces what the cache holds on the very next request.
	if res, b := do(t, mux, http.MethodPut, "/deploy/"+idAliceSite, `{"html":"<p>replaced</p>"}`, bearer(keyAlice)); res.StatusCode != 200 {
		t.Fatalf("second PUT: %d %s", res.StatusCode, b)
	}
	if res := fetch("/", "gzip"); res.Header.Get("Content-Encoding") != "" {
		t.Errorf("the small replacement page is sent with Content-Encoding %q", res.Header.Get("Content-Encoding"))
	} else if b, _ := io.ReadAll(res.Body); !strings.Contains(string(b), "replaced") {
		t.Errorf("after PUT the old page is served: %.60q", b)
	}
	if res := fetch("/assets/app-B7x_k2Qa.js", ""); res.StatusCode != 404 {
		t.Errorf("a file of the replaced version is served: %d", res.StatusCode)
	}
}
