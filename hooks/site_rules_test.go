package hooks

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// rulesSiteFiles is a site with both rule files: pages, an asset, a
// protected folder and a custom 404.
const rulesSiteFiles = `[
 {"path": "index.html", "content": "<p>home"},
 {"path": "about.html", "content": "<p>about page"},
 {"path": "docs/index.html", "content": "<p>docs page"},
 {"path": "app/index.html", "content": "<p>the app shell"},
 {"path": "404.html", "content": "<p>custom not found"},
 {"path": "assets/app.js", "content": "console.log(1)"},
 {"path": "secret/page.html", "content": "<p>secret page"},
 {"path": "_redirects", "content": "# rules\n/home / 301\n/blog/* /news/:splat 302\n/users/:id /profile?id=:id 307\n/app/* /app/index.html 200\n/gone /404.html 410\n/about /elsewhere 301\n/docs /forced-docs 302!\n/proxy/* https://example.com/:splat 200\n/ext https://example.com/x 308\n/go/* /:splat 302\n/_redirects /index.html 200\n/form-sent /thanks 303\n/old /404.html 404\n"},
 {"path": "_headers", "content": "/*\n  X-Frame-Options: DENY\n/assets/*\n  Cache-Control: public, max-age=60\n/secret/*\n  Basic-Auth: ann:pw1\n  Set-Cookie: x=y\n"}
]`

// TestSiteRules deploys a site with _redirects and _headers through the
// API and checks the answer's warnings, every kind of rule as served,
// the headers, Basic auth, and that a version keeps its own rules.
func TestSiteRules(t *testing.T) {
	t.Parallel()
	app, _ := newFixtureApp(t, func(c *Config) { c.MaxFiles = 20 })
	mux := newMux(t, app)
	key := fixtureKey("alice")
	auth := withHeaders(bearer(key), map[string]string{"Content-Type": "application/json"})

	res, body := do(t, mux, http.MethodPost, "http://web.test/deploy", `{"slug": "ruled", "files": `+rulesSiteFiles+`}`, auth)
	if res.StatusCode != 200 {
		t.Fatalf("deploy: %d %s", res.StatusCode, body)
	}
	var ans struct {
		ID       string `json:"id"`
		Warnings []struct {
			File, Text, Reason string
			Line               int
		} `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(body), &ans); err != nil {
		t.Fatal(err)
	}
	if len(ans.Warnings) != 2 ||
		ans.Warnings[0].File != "_redirects" || ans.Warnings[0].Line != 9 || !strings.Contains(ans.Warnings[0].Reason, "proxy") ||
		ans.Warnings[1].File != "_headers" || ans.Warnings[1].Line != 7 || !strings.Contains(ans.Warnings[1].Reason, "cookie") {
		t.Fatalf("warnings: %s", body)
	}

	site := func(path string, headers map[string]string) (*http.Response, string) {
		t.Helper()
		return do(t, mux, http.MethodGet, "http://ruled.sites.test"+path, "", headers)
	}
	basic := func(user, pw string) map[string]string {
		return map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pw))}
	}
	cases := []struct {
		name, path string
		headers    map[string]string
		status     int
		location   string
		body       string
	}{
		{"301 by default", "/home", nil, 301, "/", ""},
		{"splat keeps the query", "/blog/a/b?x=1", nil, 302, "/news/a/b?x=1", ""},
		{"placeholder into the query", "/users/42", nil, 307, "/profile?id=42", ""},
		{"rewrite serves another file", "/app/deep/route", nil, 200, "", "the app shell"},
		{"410 with a page", "/gone", nil, 410, "", "custom not found"},
		{"a file shadows an unforced rule", "/about", nil, 200, "", "about page"},
		{"a forced rule applies over a file", "/docs", nil, 302, "/forced-docs", ""},
		{"a proxy rule is not applied", "/proxy/x", nil, 404, "", "custom not found"},
		{"absolute target", "/ext", nil, 308, "https://example.com/x", ""},
		{"303", "/form-sent", nil, 303, "/thanks", ""},
		{"404 with a page", "/old", nil, 404, "", "custom not found"},
		{"_redirects is not served", "/_redirects", nil, 200, "", "home"}, // its own rewrite to /index.html
		{"_headers is not served", "/_headers", nil, 404, "", "custom not found"},
		{"no rule: the site's 404", "/missing", nil, 404, "", "custom not found"},
		{"Basic auth asks", "/secret/page", nil, 401, "", ""},
		{"Basic auth refuses a wrong password", "/secret/page", basic("ann", "pw2"), 401, "", ""},
		{"Basic auth lets in", "/secret/page", basic("ann", "pw1"), 200, "", "secret page"},
	}
	for _, tc := range cases {
		res, body := site(tc.path, tc.headers)
		if res.StatusCode != tc.status || res.Header.Get("Location") != tc.location || !strings.Contains(body, tc.body) {
			t.Errorf("%s: GET %s = %d Location %q %q; want %d %q %q", tc.name, tc.path,
				res.StatusCode, res.Header.Get("Location"), body, tc.status, tc.location, tc.body)
		}
		if res.Header.Get("X-Frame-Options") != "DENY" && res.StatusCode != 401 {
			t.Errorf("%s: X-Frame-Options %q, want the /* block's DENY", tc.name, res.Header.Get("X-Frame-Options"))
		}
		if res.Header.Get("X-Content-Type-Options") != "nosniff" || res.Header.Get("Basic-Auth") != "" || res.Header.Get("Set-Cookie") != "" {
			t.Errorf("%s: headers %v", tc.name, res.Header)
		}
		if res.StatusCode == 401 && !strings.HasPrefix(res.Header.Get("WWW-Authenticate"), "Basic ") {
			t.Errorf("%s: 401 without a Basic challenge: %v", tc.name, res.Header)
		}
	}
	res, _ = site("/assets/app.js", nil)
	if got := res.Header.Get("Cache-Control"); got != "public, max-age=60" {
		t.Errorf("_headers Cache-Control: got %q", got)
	}
	res, _ = site("/secret/page", basic("ann", "pw1"))
	if got := res.Header.Get("Cache-Control"); strings.Contains(got, "public") {
		t.Errorf("a page under Basic auth is %q: shared caches could keep it", got)
	}

	// a new version without rules: they are gone; a rollback brings them back
	res, body = do(t, mux, http.MethodPut, "http://web.test/deploy/"+ans.ID, `{"files": [{"path": "index.html", "content": "<p>v2"}]}`, auth)
	if res.StatusCode != 200 || !strings.Contains(body, `"warnings":[]`) {
		t.Fatalf("put: %d %s", res.StatusCode, body)
	}
	if res, _ := site("/home", nil); res.StatusCode != 404 {
		t.Errorf("v2 has no rules, /home = %d", res.StatusCode)
	}
	res, body = do(t, mux, http.MethodPost, "http://web.test/deploy/"+ans.ID+"/rollback", `{"version": 1}`, auth)
	if res.StatusCode != 200 {
		t.Fatalf("rollback: %d %s", res.StatusCode, body)
	}
	if res, _ := site("/home", nil); res.StatusCode != 301 {
		t.Errorf("after the rollback to v1, /home = %d, want its rule's 301", res.StatusCode)
	}
}

// TestRuleLimitsPerPlan: a deploy whose rule files pass its plan's limit
// (redirect rules and _headers blocks together, and their bytes) is
// refused with a 400 that names the limit, and changes nothing; anonymous
// sites have the lowest limit, pro the highest.
func TestRuleLimitsPerPlan(t *testing.T) {
	t.Parallel()
	app, _ := newFixtureApp(t, func(c *Config) { c.MaxBody = 4 << 20 })
	mux := newMux(t, app)
	redirects := func(n int) string {
		var sb strings.Builder
		for i := range n {
			fmt.Fprintf(&sb, "/r%d /t\n", i)
		}
		return sb.String()
	}
	body := func(files map[string]string) string {
		list := []map[string]string{{"path": "index.html", "content": "<p>v2"}}
		for p, c := range files {
			list = append(list, map[string]string{"path": p, "content": c})
		}
		b, err := json.Marshal(map[string]any{"files": list})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	jsonType := map[string]string{"Content-Type": "application/json"}
	headerBlocks := "/a\n  X-A: 1\n/b\n  X-B: 1\n"
	cases := []struct {
		name, method, url, key string
		files                  map[string]string
		status                 int
		want                   string
	}{
		{"anonymous over", "POST", "/deploy", "", map[string]string{"_redirects": redirects(1001)}, 400,
			`{"error":"Too many rules: _redirects and _headers hold more than 1,000 rules and header blocks together; an anonymous site may have 1,000"}`},
		{"anonymous at the limit", "POST", "/deploy", "", map[string]string{"_redirects": redirects(1000)}, 200, ""},
		{"free over", "POST", "/deploy", keyAlice, map[string]string{"_redirects": redirects(10_001)}, 400,
			`{"error":"Too many rules: _redirects and _headers hold more than 10,000 rules and header blocks together; a site of the free plan may have 10,000"}`},
		{"free over with header blocks", "PUT", "/deploy/" + idAliceSite, keyAlice,
			map[string]string{"_redirects": redirects(9_999), "_headers": headerBlocks}, 400,
			`{"error":"Too many rules: _redirects and _headers hold 10,001 rules and header blocks together; a site of the free plan may have 10,000"}`},
		{"free too large", "PUT", "/deploy/" + idAliceSite, keyAlice,
			map[string]string{"_redirects": "#" + strings.Repeat("x", 1<<20) + "\n"}, 400,
			`{"error":"Rule files too large: _redirects and _headers are 1,048,578 bytes together; a site of the free plan may have 1 MiB"}`},
		{"pro past the free limit", "POST", "/deploy", keyPia, map[string]string{"_redirects": redirects(10_001), "_headers": headerBlocks}, 200, ""},
		{"pro over", "POST", "/deploy", keyPia, map[string]string{"_redirects": redirects(20_001)}, 400,
			`{"error":"Too many rules: _redirects and _headers hold more than 20,000 rules and header blocks together; a site of the pro plan may have 20,000"}`},
	}
	count := func() int {
		n, err := app.CountRecords("deployments")
		if err != nil {
			t.Fatal(err)
		}
		return int(n)
	}
	for _, tc := range cases {
		before := count()
		headers := jsonType
		if tc.key != "" {
			headers = withHeaders(jsonType, bearer(tc.key))
		}
		res, got := do(t, mux, tc.method, "http://web.test"+tc.url, body(tc.files), headers)
		if res.StatusCode != tc.status || tc.want != "" && strings.TrimSpace(got) != tc.want {
			t.Errorf("%s: %d %.300s, want %d %s", tc.name, res.StatusCode, got, tc.status, tc.want)
		}
		if tc.status != 200 && count() != before {
			t.Errorf("%s: a refused deploy changed the deployments (%d, then %d)", tc.name, before, count())
		}
	}
	// the refused PUTs left alice-site as it was
	if _, got := do(t, mux, http.MethodGet, "http://alice-site.sites.test/", "", nil); strings.Contains(got, "v2") {
		t.Errorf("a refused PUT replaced the site: %q", got)
	}
}
