package client

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"sitedrop/sites/wire"
)

// seen is a request as the test server got it.
type seen struct {
	method, uri, auth, contentType, expect, body string
	length                                       int64
	chunked                                      bool
}

// recorder answers with answer and records the requests it gets.
func recorder(t *testing.T, answer func(w http.ResponseWriter, r *http.Request)) (*httptest.Server, func() []seen) {
	var mu sync.Mutex
	var got []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, seen{r.Method, r.URL.RequestURI(), r.Header.Get("Authorization"), r.Header.Get("Content-Type"), r.Header.Get("Expect"), string(b), r.ContentLength, len(r.TransferEncoding) > 0})
		mu.Unlock()
		answer(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []seen { mu.Lock(); defer mu.Unlock(); return append([]seen(nil), got...) }
}

// TestClientRequests: each method sends the request the CLI always sent
// (JSON bodies byte for byte as the CLI's maps encoded), and decodes the
// answer.
func TestClientRequests(t *testing.T) {
	srv, got := recorder(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/deploys":
			w.Write([]byte(`{"deployments":[{"id":"d1","slug":"s","url":"u","title":"T","updated_at":"now"}]}`))
		case "/blobs/missing":
			w.Write([]byte(`{"missing":["aa"]}`))
		case "/deploy/d1/aliases":
			w.Write([]byte(`{"aliases":[{"name":"staging","version":3,"url":"u"}]}`))
		case "/deploy/d1/versions/3/files":
			w.Write([]byte(`{"version":3,"files":[{"path":"a.html","size":5,"hash":"aa"}]}`))
		case "/deploy/d1/diff":
			w.Write([]byte(`{"from":1,"to":3,"added":[{"path":"a.html","size":5}],"changed":[{"path":"b","from_size":1,"to_size":2}],"removed":[]}`))
		default:
			w.Write([]byte(`{"id":"d1","slug":"s","url":"u","version":2,"message":"deleted","otp_id":"o","api_key":"k","claim_url":"c","expires_at":"e"}`))
		}
	})
	c := New(srv.URL+"/", "key1")
	on, empty, slug, title := true, "", "s", "T"
	files := []wire.FileEntry{{Path: "a.html", SHA256: "aa"}, {Path: "e.txt", Content: &empty, Encoding: "base64"}}
	d, err := c.Deploy("", &wire.DeployRequest{Slug: &slug, Title: &title, IsSPA: &on, Files: &files})
	if err != nil || d.ID != "d1" || d.ClaimURL != "c" || d.ExpiresAt != "e" {
		t.Fatalf("Deploy: %+v %v", d, err)
	}
	if _, err := c.Deploy("a b", &wire.DeployRequest{Files: &[]wire.FileEntry{{Path: "a.html", SHA256: "aa"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeployArchive("", Archive{Body: Sized{R: strings.NewReader("PK.."), Size: 4}, ContentType: "application/zip", Slug: "s", Title: "T t", IsSPA: new(bool)}); err != nil {
		t.Fatal(err)
	}
	if m, err := c.Missing([]string{"aa", "bb"}); err != nil || len(m) != 1 || m[0] != "aa" {
		t.Fatalf("Missing: %v %v", m, err)
	}
	if err := c.UploadBlob(t.Context(), "aa", Sized{R: strings.NewReader("hello"), Size: 5}); err != nil {
		t.Fatal(err)
	}
	if err := c.UploadBlob(t.Context(), "bb", Sized{R: strings.NewReader(""), Size: 0}); err != nil {
		t.Fatal(err)
	}
	if l, err := c.List(); err != nil || len(l) != 1 || l[0].Title != "T" || l[0].UpdatedAt != "now" {
		t.Fatalf("List: %+v %v", l, err)
	}
	if m, err := c.Delete("d1"); err != nil || m != "deleted" {
		t.Fatalf("Delete: %q %v", m, err)
	}
	if _, err := c.Versions("d1"); err != nil {
		t.Fatal(err)
	}
	if r, err := c.Rollback("d1", 2); err != nil || r.Version != 2 || r.Slug != "s" {
		t.Fatalf("Rollback: %+v %v", r, err)
	}
	if p, err := c.Promote("d1", 3); err != nil || p.Slug != "s" || p.Version != 2 {
		t.Fatalf("Promote: %+v %v", p, err)
	}
	if _, err := c.DeployArchive("d1", Archive{Body: Sized{R: strings.NewReader("PK.."), Size: 4}, ContentType: "application/zip", Draft: true, Alias: "staging", Message: "fix #2"}); err != nil {
		t.Fatal(err)
	}
	if a, err := c.Aliases("d1"); err != nil || len(a) != 1 || a[0].Name != "staging" || a[0].Version != 3 {
		t.Fatalf("Aliases: %+v %v", a, err)
	}
	if m, err := c.DeleteAlias("d1", "staging"); err != nil || m != "deleted" {
		t.Fatalf("DeleteAlias: %q %v", m, err)
	}
	if f, err := c.VersionFiles("d1", 3); err != nil || len(f) != 1 || f[0].Path != "a.html" || f[0].Size != 5 {
		t.Fatalf("VersionFiles: %+v %v", f, err)
	}
	if d, err := c.Diff("d1", 1, 3); err != nil || len(d.Added) != 1 || d.Added[0].Size != 5 || len(d.Changed) != 1 || d.Changed[0].ToSize != 2 {
		t.Fatalf("Diff: %+v %v", d, err)
	}
	c.Key = ""
	if id, err := c.RequestCode("a@example.com"); err != nil || id != "o" {
		t.Fatalf("RequestCode: %q %v", id, err)
	}
	if k, err := c.Verify("o", "123"); err != nil || k != "k" {
		t.Fatalf("Verify: %q %v", k, err)
	}

	want := []seen{
		{method: "POST", uri: "/deploy", auth: "Bearer key1", contentType: "application/json", body: `{"files":[{"path":"a.html","sha256":"aa"},{"content":"","encoding":"base64","path":"e.txt"}],"is_spa":true,"slug":"s","title":"T"}`},
		{method: "PUT", uri: "/deploy/a%20b", auth: "Bearer key1", contentType: "application/json", body: `{"files":[{"path":"a.html","sha256":"aa"}]}`},
		{method: "POST", uri: "/deploy?is_spa=false&slug=s&title=T+t", auth: "Bearer key1", contentType: "application/zip", expect: "100-continue", body: "PK..", length: 4},
		{method: "POST", uri: "/blobs/missing", auth: "Bearer key1", contentType: "application/json", body: `{"hashes":["aa","bb"]}`},
		{method: "PUT", uri: "/blobs/aa", auth: "Bearer key1", contentType: "application/octet-stream", expect: "100-continue", body: "hello", length: 5},
		{method: "PUT", uri: "/blobs/bb", auth: "Bearer key1", contentType: "application/octet-stream", body: "", length: 0},
		{method: "GET", uri: "/deploys", auth: "Bearer key1"},
		{method: "DELETE", uri: "/deploy/d1", auth: "Bearer key1"},
		{method: "GET", uri: "/deploy/d1/versions", auth: "Bearer key1"},
		{method: "POST", uri: "/deploy/d1/rollback", auth: "Bearer key1", contentType: "application/json", body: `{"version":2}`},
		{method: "POST", uri: "/deploy/d1/versions/3/promote", auth: "Bearer key1"},
		{method: "PUT", uri: "/deploy/d1?alias=staging&draft=true&message=fix+%232", auth: "Bearer key1", contentType: "application/zip", expect: "100-continue", body: "PK..", length: 4},
		{method: "GET", uri: "/deploy/d1/aliases", auth: "Bearer key1"},
		{method: "DELETE", uri: "/deploy/d1/aliases/staging", auth: "Bearer key1"},
		{method: "GET", uri: "/deploy/d1/versions/3/files", auth: "Bearer key1"},
		{method: "GET", uri: "/deploy/d1/diff?from=1&to=3", auth: "Bearer key1"},
		{method: "POST", uri: "/auth/otp", contentType: "application/json", body: `{"email":"a@example.com"}`},
		{method: "POST", uri: "/auth/verify", contentType: "application/json", body: `{"code":"123","otp_id":"o"}`},
	}
	all := got()
	if len(all) != len(want) {
		t.Fatalf("%d requests, want %d: %+v", len(all), len(want), all)
	}
	for i, w := range want {
		g := all[i]
		if w.body != "" && w.length == 0 && !strings.HasPrefix(w.contentType, "application/octet") {
			w.length = int64(len(w.body))
		}
		if g != w {
			t.Errorf("request %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
}

// TestClientSizedBody: a Sized body goes with its Content-Length and
// "Expect: 100-continue", empty as no body, and is sent again after a
// 307/308 redirect.
func TestClientSizedBody(t *testing.T) {
	var expects []string
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if string(b) != "hello" || r.ContentLength != 5 {
			w.WriteHeader(400)
			w.Write([]byte(`{"error":"got ` + string(b) + `"}`))
		}
	}))
	defer target.Close()
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		expects = append(expects, r.Header.Get("Expect"))
		http.Redirect(w, r, target.URL+r.URL.RequestURI(), http.StatusPermanentRedirect)
	}))
	defer front.Close()
	if err := New(front.URL, "k").UploadBlob(t.Context(), "aa", Sized{R: strings.NewReader("hello"), Size: 5}); err != nil {
		t.Fatalf("through a 308: %v", err)
	}
	if len(expects) != 1 || expects[0] != "100-continue" {
		t.Errorf("Expect headers %q", expects)
	}

	req, _ := http.NewRequest("PUT", "http://x/", nil)
	Sized{R: strings.NewReader("hello"), Size: 5}.prepare(req)
	if req.Header.Get("Expect") != "100-continue" || req.ContentLength != 5 || req.GetBody == nil {
		t.Errorf("sized request: %v %d", req.Header, req.ContentLength)
	}
	req, _ = http.NewRequest("PUT", "http://x/", nil)
	Sized{R: strings.NewReader(""), Size: 0}.prepare(req)
	if req.Body != http.NoBody || req.ContentLength != 0 || req.Header.Get("Expect") != "" {
		t.Errorf("empty request: %v %v %d", req.Body, req.Header, req.ContentLength)
	}
}

// TestClientErrors: an error answer is an *Error with the server's
// "error" text, or its whole text, as sent; a 3xx not followed is an
// error too.
func TestClientErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/deploys":
			w.WriteHeader(401)
			w.Write([]byte(`{"error":"Unauthorized \u001b[2J"}`))
		case "/deploy/text":
			w.WriteHeader(500)
			w.Write([]byte("raw text\n"))
		default:
			w.Header().Set("Location", "http://elsewhere/")
			w.WriteHeader(http.StatusMultipleChoices)
		}
	}))
	defer srv.Close()
	c := New(srv.URL, "k")
	var ce *Error
	if _, err := c.List(); !errors.As(err, &ce) || ce.Status != 401 || ce.Msg != "Unauthorized \x1b[2J" || err.Error() != "Unauthorized \x1b[2J (HTTP 401)" {
		t.Errorf("JSON error: %#v", err)
	}
	if _, err := c.Delete("text"); !errors.As(err, &ce) || ce.Status != 500 || ce.Msg != "raw text" {
		t.Errorf("text error: %#v", err)
	}
	if _, err := c.Deploy("", &wire.DeployRequest{}); !errors.As(err, &ce) || ce.Status != 300 || !strings.Contains(ce.Msg, "redirected to http://elsewhere/") {
		t.Errorf("3xx: %#v", err)
	}
}

// TestClientSendsMarkupUnescaped: a page's <, > and & go out as
// themselves, not as 6-byte \u escapes, which made markup-heavy HTML meet
// the server's body limit at a sixth of its size.
func TestClientSendsMarkupUnescaped(t *testing.T) {
	srv, got := recorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"id":"d1","slug":"s","url":"u"}`))
	})
	html := "<p>fish & chips</p>"
	if _, err := New(srv.URL, "key1").Deploy("", &wire.DeployRequest{Files: &[]wire.FileEntry{{Path: "index.html", Content: &html}}}); err != nil {
		t.Fatal(err)
	}
	body := got()[0].body
	if !strings.Contains(body, `"content":"<p>fish & chips</p>"`) || strings.HasSuffix(body, "\n") {
		t.Fatalf("sent %q", body)
	}
}
