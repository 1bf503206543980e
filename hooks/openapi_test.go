package hooks

import (
	"encoding/json"
	"fmt"
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

// failures records what checkAnswer reports instead of failing the test.
type failures struct {
	testing.TB
	msgs []string
}

func (f *failures) Helper() {}
func (f *failures) Errorf(format string, args ...any) {
	f.msgs = append(f.msgs, fmt.Sprintf(format, args...))
}

// TestCheckAnswer: the response validation the API tests run catches a
// body, a status and a content type the description does not allow, and
// leaves pages and site hosts alone.
func TestCheckAnswer(t *testing.T) {
	for _, c := range []struct {
		name, method, url string
		status            int
		ctype, body       string
		bad               bool
	}{
		{"described answer", "GET", "http://web.test/deploy/abc", 404, "application/json", `{"error":"Deployment not found"}`, false},
		{"wrong field type", "GET", "http://web.test/deploys", 200, "application/json", `{"deployments":[{"id":1}]}`, true},
		{"field not described", "POST", "http://web.test/deploy/claim", 200, "application/json", `{"id":"a","slug":"b","url":"http://b.sites.test/","extra":1}`, true},
		{"status not described", "GET", "http://web.test/deploy/abc", 418, "application/json", `{"error":"teapot"}`, true},
		{"content type not described", "GET", "http://web.test/deploy/abc", 404, "text/html", `<h1>no</h1>`, true},
		{"a page", "GET", "http://web.test/account", 200, "text/html", `<h1>account</h1>`, false},
		{"a site host", "GET", "http://my-site.sites.test/deploys", 200, "text/html", `<h1>site</h1>`, false},
		{"an empty path value", "GET", "http://web.test/deploy", 405, "application/json", `{"error":"Method not allowed"}`, false},
	} {
		f := &failures{TB: t}
		req := newRequest(c.method, c.url, "", nil)
		res := &http.Response{StatusCode: c.status, Header: http.Header{"Content-Type": {c.ctype}}}
		checkAnswer(f, req, res, []byte(c.body))
		if (len(f.msgs) > 0) != c.bad {
			t.Errorf("%s: reported %q, want a report: %v", c.name, f.msgs, c.bad)
		}
	}
}

// TestOpenAPIBuiltOnFirstUse: requests racing to be the first to build
// the description all get the same body and ETag (run with -race).
func TestOpenAPIBuiltOnFirstUse(t *testing.T) {
	doc := &openAPIBody{webURL: "http://web.test"}
	const n = 8
	type got struct {
		body []byte
		etag string
		err  error
	}
	results := make(chan got, n)
	for range n {
		go func() {
			body, etag, err := doc.get()
			results <- got{body, etag, err}
		}()
	}
	var first got
	for i := range n {
		r := <-results
		if r.err != nil {
			t.Fatal(r.err)
		}
		if i == 0 {
			first = r
			continue
		}
		if r.etag != first.etag || &r.body[0] != &first.body[0] {
			t.Errorf("two builds: ETag %s and %s", first.etag, r.etag)
		}
	}
	if first.etag == "" || !strings.Contains(string(first.body), `"url": "http://web.test"`) {
		t.Errorf("ETag %q, body without the web URL: %.200s", first.etag, first.body)
	}
}
