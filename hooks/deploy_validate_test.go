package hooks

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/pocketbase/pocketbase/tests"

	"sitedrop/sites"
	"sitedrop/sites/intake"
	"sitedrop/sites/wire"
)

// TestMetadataControlCharacters: title, description and favicon refuse
// control characters (Unicode category Cc, line breaks and tabs included)
// and the bidi embedding, override and isolate controls, naming the field
// and the character; ordinary Unicode passes.
func TestMetadataControlCharacters(t *testing.T) {
	t.Parallel()
	str := func(s string) *string { return &s }
	refused := []struct {
		name string
		req  wire.DeployRequest
		want string
	}{
		{"ESC in title", wire.DeployRequest{Title: str("hi\x1b[2J")}, "title contains a control character (U+001B)"},
		{"LF in title", wire.DeployRequest{Title: str("a\nb")}, "title contains a control character (U+000A)"},
		{"CR in description", wire.DeployRequest{Description: str("a\rb")}, "description contains a control character (U+000D)"},
		{"tab in description", wire.DeployRequest{Description: str("a\tb")}, "description contains a control character (U+0009)"},
		{"NUL in title", wire.DeployRequest{Title: str("a\x00")}, "title contains a control character (U+0000)"},
		{"DEL in title", wire.DeployRequest{Title: str("a\x7f")}, "title contains a control character (U+007F)"},
		{"C1 CSI in title", wire.DeployRequest{Title: str("a\u009b2J")}, "title contains a control character (U+009B)"},
		{"ESC in favicon", wire.DeployRequest{Favicon: str("\x1b")}, "favicon contains a control character (U+001B)"},
		{"RLO in title", wire.DeployRequest{Title: str("abc\u202etxt.exe")}, "title contains a bidirectional override (U+202E)"},
		{"RLI in description", wire.DeployRequest{Description: str("x\u2067y")}, "description contains a bidirectional override (U+2067)"},
	}
	for _, tt := range refused {
		_, err := intake.CheckMetadata(&tt.req)
		ae, ok := toAPIError(err)
		if err == nil || !ok || ae.Status != http.StatusBadRequest || ae.Message != tt.want {
			t.Errorf("%s: metadata() = %v, want 400 %q", tt.name, err, tt.want)
		}
	}
	for _, ok := range []wire.DeployRequest{
		{Title: str("Café 東京 — ✓ مرحبا"), Description: str("Ünïcödé, with an RLM\u200f mark"), Favicon: str("👩‍💻")},
		{Title: str(""), Description: str("")},
	} {
		if _, err := intake.CheckMetadata(&ok); err != nil {
			t.Errorf("metadata(%q, %q) = %v, want accepted", deref(ok.Title), deref(ok.Description), err)
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// TestDeployMetadataControlCharactersEndpoints: every way of setting the
// metadata refuses control characters and changes nothing.
func TestDeployMetadataControlCharactersEndpoints(t *testing.T) {
	t.Parallel()
	unchanged := func(t testing.TB, app *tests.TestApp, _ *http.Response) {
		if n, _ := app.CountRecords("deployments"); n != 4 {
			t.Fatalf("a refused deploy created a deployment (%d)", n)
		}
		rec, err := app.FindRecordById("deployments", idAliceSite)
		if err != nil || rec.GetString("title") != "Alice" {
			t.Fatalf("alice-site changed: %v %q", err, rec.GetString("title"))
		}
	}
	runScenarios(t, []tests.ApiScenario{
		{
			Name:            "JSON create, ESC in title",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Body:            strings.NewReader(`{"html":"x","title":"\u001b]0;pwned\u0007"}`),
			ExpectedStatus:  400,
			ExpectedContent: []string{errBody("title contains a control character (U+001B)")},
			TestAppFactory:  newTestApp,
			AfterTestFunc:   unchanged,
		},
		{
			Name:            "JSON update, CR LF in description",
			Method:          http.MethodPut,
			URL:             "/deploy/" + idAliceSite,
			Headers:         bearer(keyAlice),
			Body:            strings.NewReader(`{"html":"x","description":"a\r\nb"}`),
			ExpectedStatus:  400,
			ExpectedContent: []string{errBody("description contains a control character (U+000D)")},
			TestAppFactory:  newTestApp,
			AfterTestFunc:   unchanged,
		},
		{
			Name:            "archive create, LF in the query's title",
			Method:          http.MethodPost,
			URL:             "/deploy?title=" + url.QueryEscape("a\nb"),
			Headers:         withHeaders(bearer(keyPia), map[string]string{"Content-Type": "application/zip"}),
			Body:            zipOf(t, "index.html", "<p>z</p>"),
			ExpectedStatus:  400,
			ExpectedContent: []string{errBody("title contains a control character (U+000A)")},
			TestAppFactory:  newTestApp,
			AfterTestFunc:   unchanged,
		},
		{
			// the query is checked before the body is read: a broken
			// archive is not what the answer is about
			Name:            "archive create, bad title and a body that is no zip",
			Method:          http.MethodPost,
			URL:             "/deploy?title=" + url.QueryEscape("a\x1bb"),
			Headers:         withHeaders(bearer(keyPia), map[string]string{"Content-Type": "application/zip"}),
			Body:            strings.NewReader("not a zip at all"),
			ExpectedStatus:  400,
			ExpectedContent: []string{errBody("title contains a control character (U+001B)")},
			TestAppFactory:  newTestApp,
			AfterTestFunc:   unchanged,
		},
		{
			Name:            "archive update, ESC in the query's favicon",
			Method:          http.MethodPut,
			URL:             "/deploy/" + idAliceSite + "?favicon=" + url.QueryEscape("\x1b"),
			Headers:         withHeaders(bearer(keyAlice), map[string]string{"Content-Type": "application/gzip"}),
			Body:            tarGzOf(t, "index.html", "<p>t</p>"),
			ExpectedStatus:  400,
			ExpectedContent: []string{errBody("favicon contains a control character (U+001B)")},
			TestAppFactory:  newTestApp,
			AfterTestFunc:   unchanged,
		},
	})
}

// TestDeployFileEntryWithoutContent: a file entry needs content or sha256;
// an empty content is an empty file.
func TestDeployFileEntryWithoutContent(t *testing.T) {
	t.Parallel()
	noNewDeployment := func(t testing.TB, app *tests.TestApp, _ *http.Response) {
		if n, _ := app.CountRecords("deployments"); n != 4 {
			t.Fatalf("a refused deploy created a deployment (%d)", n)
		}
	}
	runScenarios(t, []tests.ApiScenario{
		{
			Name:            "path only",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Body:            strings.NewReader(`{"files":[{"path":"index.html","content":"<p>hi</p>"},{"path":"about.html"}]}`),
			ExpectedStatus:  400,
			ExpectedContent: []string{errBody(`invalid file path "about.html": files[1] has no content: content or sha256 is required`)},
			TestAppFactory:  newTestApp,
			AfterTestFunc:   noNewDeployment,
		},
		{
			Name:            "content null counts as missing",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Body:            strings.NewReader(`{"files":[{"path":"a.txt","content":null}]}`),
			ExpectedStatus:  400,
			ExpectedContent: []string{errBody(`invalid file path "a.txt": files[0] has no content: content or sha256 is required`)},
			TestAppFactory:  newTestApp,
			AfterTestFunc:   noNewDeployment,
		},
		{
			Name:            "encoding without content",
			Method:          http.MethodPut,
			URL:             "/deploy/" + idAliceSite,
			Headers:         bearer(keyAlice),
			Body:            strings.NewReader(`{"files":[{"path":"img/a.png","encoding":"base64"}]}`),
			ExpectedStatus:  400,
			ExpectedContent: []string{errBody(`invalid file path "img/a.png": files[0] has no content: content or sha256 is required`)},
			TestAppFactory:  newTestApp,
			AfterTestFunc:   expectSite("alice-site.sites.test", 200, "alice"),
		},
		{
			Name:            "empty content is an empty file",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Headers:         bearer(keyPia),
			Body:            strings.NewReader(`{"slug":"empty-file","files":[{"path":"index.html","content":"<p>x</p>"},{"path":"empty.txt","content":""},{"path":"e.bin","content":"","encoding":"base64"}]}`),
			ExpectedStatus:  200,
			ExpectedContent: []string{`"slug":"empty-file"`},
			TestAppFactory:  newTestApp,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, _ *http.Response) {
				for _, p := range []string{"/empty.txt", "/e.bin"} {
					if code, b := siteGet(t, app, "empty-file.sites.test", p); code != 200 || b != "" {
						t.Fatalf("%s: %d %q, want an empty file", p, code, b)
					}
				}
			},
		},
		{
			Name:            "an archive's empty file is still an empty file",
			Method:          http.MethodPost,
			URL:             "/deploy?slug=empty-zip",
			Headers:         withHeaders(bearer(keyPia), map[string]string{"Content-Type": "application/zip"}),
			Body:            zipOf(t, "index.html", "<p>z</p>", "empty.txt", ""),
			ExpectedStatus:  200,
			ExpectedContent: []string{`"slug":"empty-zip"`},
			TestAppFactory:  newTestApp,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, _ *http.Response) {
				if code, b := siteGet(t, app, "empty-zip.sites.test", "/empty.txt"); code != 200 || b != "" {
					t.Fatalf("empty.txt: %d %q, want an empty file", code, b)
				}
			},
		},
	})
}

// TestDashboardMetadataRules: title, description and favicon edited in the
// dashboard (any record save) follow the API's rules on characters, and a
// save that leaves them as they are is not checked again.
func TestDashboardMetadataRules(t *testing.T) {
	app, _ := newFixtureApp(t)
	for _, c := range []struct{ field, value string }{
		{"title", "a\x1bb"},
		{"description", "line\nbreak"},
		{"favicon", "\u202e"},
	} {
		rec, err := app.FindRecordById(sites.DeploymentsCollection, idAliceSite)
		if err != nil {
			t.Fatal(err)
		}
		rec.Set(c.field, c.value)
		if err := app.Save(rec); err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%s %q: saved (%v)", c.field, c.value, err)
		}
	}
	rec, _ := app.FindRecordById(sites.DeploymentsCollection, idAliceSite)
	rec.Set("title", "A fine title")
	if err := app.Save(rec); err != nil {
		t.Fatalf("a clean title: %v", err)
	}
}
