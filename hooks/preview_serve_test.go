package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pocketbase/pocketbase/tests"

	"sitedrop/hooks/server/certs"
	"sitedrop/sites"
	"sitedrop/sites/analytics/statsdb"
)

// previewFixture is a site "prev" with three versions: 1 ("one"), 2
// ("two", with its own 404 page and _headers) and 3 ("three", live).
type previewFixture struct {
	app *tests.TestApp
	sd  *built
	mux http.Handler
	dep string
}

func newPreviewFixture(t *testing.T, tune ...func(*Config)) *previewFixture {
	t.Helper()
	app, sd := newBareApp(t, tune...)
	t.Cleanup(app.Cleanup)
	alice := mustUser(t, app, "alice@example.com", "free", fixtureKey("alice"))
	dep := mustDeploy(t, sd, alice, "", "prev", "<h1>one</h1>", "Prev")
	f := &previewFixture{app: app, sd: sd, mux: newMux(t, app), dep: dep.Id}
	f.put(t, map[string]string{
		"index.html": "<h1>two</h1>",
		"404.html":   "<h1>two's own 404</h1>",
		"_headers":   "/*\n  X-Test: v2\n  X-Robots-Tag: all\n",
	})
	f.put(t, map[string]string{"index.html": "<h1>three</h1>"})
	return f
}

// put deploys files as the site's next version, made live.
func (f *previewFixture) put(t *testing.T, files map[string]string) {
	t.Helper()
	var list []map[string]string
	for p, c := range files {
		list = append(list, map[string]string{"path": p, "content": c})
	}
	body, _ := json.Marshal(map[string]any{"files": list})
	if res, b := do(t, f.mux, http.MethodPut, "/deploy/"+f.dep, string(body), bearer(fixtureKey("alice"))); res.StatusCode != 200 {
		t.Fatalf("PUT: %d %s", res.StatusCode, b)
	}
}

// get sends GET target to host through the front door.
func (f *previewFixture) get(t *testing.T, host, target string, headers map[string]string) (*http.Response, string) {
	t.Helper()
	return do(t, f.mux, http.MethodGet, "http://"+host+target, "", headers)
}

// TestPreviewHostServesItsVersion: v<N>--<slug> serves version N exactly
// (its files, its own 404 page and _headers), never the live one, with
// X-Robots-Tag: noindex on every answer, over the site's own header; the
// live host is unchanged and not noindex; both are cached apart.
func TestPreviewHostServesItsVersion(t *testing.T) {
	f := newPreviewFixture(t)
	for range 2 { // the second round is served from the caches
		for _, c := range []struct{ host, path, want, header string }{
			{"prev.sites.test", "/", "three", ""},
			{"v1--prev.sites.test", "/", "one", ""},
			{"v2--prev.sites.test", "/", "two", "v2"},
			{"v3--prev.sites.test", "/", "three", ""},
			{"prev.sites.test", "/", "three", ""},
		} {
			res, body := f.get(t, c.host, c.path, nil)
			if res.StatusCode != 200 || !strings.Contains(body, c.want) {
				t.Fatalf("%s%s: %d %.80q, want %q", c.host, c.path, res.StatusCode, body, c.want)
			}
			if got := res.Header.Get("X-Test"); got != c.header {
				t.Errorf("%s: X-Test %q, want %q (the version's own _headers)", c.host, got, c.header)
			}
			robots := res.Header.Values("X-Robots-Tag")
			if preview := c.host != "prev.sites.test"; preview && (len(robots) != 1 || robots[0] != "noindex") {
				t.Errorf("%s: X-Robots-Tag %q, want noindex only", c.host, robots)
			} else if !preview && len(robots) != 0 {
				t.Errorf("live host: X-Robots-Tag %q", robots)
			}
		}
	}
	// Each version's own 404 page.
	if res, body := f.get(t, "v2--prev.sites.test", "/nope", nil); res.StatusCode != 404 || !strings.Contains(body, "two's own 404") {
		t.Errorf("v2's missing page: %d %.80q", res.StatusCode, body)
	}
	if res, body := f.get(t, "prev.sites.test", "/nope", nil); res.StatusCode != 404 || strings.Contains(body, "two's own 404") {
		t.Errorf("the live missing page is v2's: %d %.80q", res.StatusCode, body)
	}
}

// TestPreviewUnknownIsPlain404: a version that is not kept, an alias
// that does not exist, a site that does not exist and a label that is
// no preview label all answer the server's plain 404 page (the one of an
// unknown site), noindex on preview hosts, never a version's content.
func TestPreviewUnknownIsPlain404(t *testing.T) {
	f := newPreviewFixture(t)
	_, unknownSite := f.get(t, "nosuch.sites.test", "/", nil)
	for _, host := range []string{
		"v4--prev.sites.test", "v0--prev.sites.test", "v01--prev.sites.test", "staging--prev.sites.test",
		"v1--nosuch.sites.test", "v1--prev--x.sites.test", "x-v1--prev.sites.test",
	} {
		res, body := f.get(t, host, "/", nil)
		if res.StatusCode != 404 || body != unknownSite {
			t.Errorf("%s: %d %.80q, want the plain not-found page", host, res.StatusCode, body)
		}
		for _, v := range []string{"one", "two", "three"} {
			if strings.Contains(body, v) {
				t.Errorf("%s serves content %q", host, v)
			}
		}
		if _, _, _, _, ok := sites.ParsePreviewLabel(strings.TrimSuffix(host, ".sites.test")); ok && res.Header.Get("X-Robots-Tag") != "noindex" {
			t.Errorf("%s: no noindex on an unknown preview", host)
		}
	}
}

// TestPreviewProtectedHasItsOwnGate: a protected site's preview host has
// its own gate: the same password and share link let in, with a
// host-only cookie of its own; the live host's cookie does not open the
// preview, nor the preview's the live site or another preview.
func TestPreviewProtectedHasItsOwnGate(t *testing.T) {
	f := newPreviewFixture(t)
	rec, err := f.app.FindRecordById("deployments", f.dep)
	if err != nil {
		t.Fatal(err)
	}
	h, err := sites.HashPassword("prev's password")
	if err != nil {
		t.Fatal(err)
	}
	on := true
	if rec, err = f.sd.svc.SetProtection(context.Background(), rec, sites.ProtectionChange{PasswordHash: &h, Link: &on}); err != nil {
		t.Fatal(err)
	}
	token := sites.ProtectionOf(rec).ShareToken()

	// pass lets a client in at host with the share link; its cookie.
	pass := func(host string) string {
		t.Helper()
		res, _ := f.get(t, host, "/?_token="+token, nil)
		if res.StatusCode != http.StatusSeeOther {
			t.Fatalf("%s share link: %d", host, res.StatusCode)
		}
		for _, c := range res.Cookies() {
			if c.Name == "sitedrop_gate" {
				if c.Domain != "" {
					t.Errorf("%s: the gate cookie has Domain %q: not host-only", host, c.Domain)
				}
				return c.Name + "=" + c.Value
			}
		}
		t.Fatalf("%s: no gate cookie", host)
		return ""
	}
	status := func(host, cookie string) int {
		t.Helper()
		var hd map[string]string
		if cookie != "" {
			hd = map[string]string{"Cookie": cookie}
		}
		res, body := f.get(t, host, "/", hd)
		if res.StatusCode == 200 && host == "v1--prev.sites.test" && !strings.Contains(body, "one") {
			t.Errorf("%s let in but served %.60q", host, body)
		}
		if host != "prev.sites.test" && res.Header.Get("X-Robots-Tag") != "noindex" {
			t.Errorf("%s: the gate's answer is not noindex", host)
		}
		return res.StatusCode
	}
	if s := status("v1--prev.sites.test", ""); s != 401 {
		t.Fatalf("a protected site's preview without a cookie: %d, want the gate (401)", s)
	}
	live, preview := pass("prev.sites.test"), pass("v1--prev.sites.test")
	for _, c := range []struct {
		host, cookie string
		want         int
	}{
		{"prev.sites.test", live, 200},
		{"v1--prev.sites.test", preview, 200},
		{"v1--prev.sites.test", live, 401},
		{"prev.sites.test", preview, 401},
		{"v2--prev.sites.test", preview, 401},
	} {
		if s := status(c.host, c.cookie); s != c.want {
			t.Errorf("%s with the cookie of %s: %d, want %d", c.host, map[string]string{live: "the live host", preview: "v1's host"}[c.cookie], s, c.want)
		}
	}
	// The password opens a preview too.
	req := httptest.NewRequest(http.MethodPost, "http://v1--prev.sites.test/.sitedrop/gate", strings.NewReader("password=prev%27s+password&next=%2F"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	w := httptest.NewRecorder()
	f.mux.ServeHTTP(w, req)
	if w.Code != http.StatusSeeOther || len(w.Result().Cookies()) == 0 {
		t.Errorf("the password at the preview's gate: %d", w.Code)
	}
}

// TestPreviewAnalyticsApart: a preview's page views are counted in
// preview_views only; the live site's page views, visitors and top pages
// hold none of them.
func TestPreviewAnalyticsApart(t *testing.T) {
	f := newPreviewFixture(t, analyticsOn)
	visit(f.sd, "prev", "/", "198.51.100.1", "")
	visit(f.sd, "v1--prev", "/", "198.51.100.2", "")
	visit(f.sd, "v2--prev", "/", "198.51.100.3", "")
	visit(f.sd, "v2--prev", "/nope", "198.51.100.3", "")
	f.sd.statsFlush.FlushPeriodic()
	row := statsRow(t, f.app, f.dep, time.Now().UTC().Format(time.DateOnly))
	if row == nil {
		t.Fatal("no row")
	}
	if row.PageViews() != 1 || row.Visitors() != 1 || row.NotFound() != 0 || row.PreviewViews() != 2 {
		t.Fatalf("row %v: want the live view alone in page_views and the two preview views apart", row.PublicExport())
	}
	if pages := row.TopPages(); len(pages) != 1 || pages[0].Count != 1 {
		t.Fatalf("top pages %+v", pages)
	}
	// the API's report and the site page's panel show them apart too
	res, body := do(t, f.mux, http.MethodGet, "/deploy/"+f.dep+"/analytics", "", bearer(fixtureKey("alice")))
	var rep statsdb.Report
	if err := json.Unmarshal([]byte(body), &rep); err != nil || res.StatusCode != 200 || len(rep.Days) == 0 {
		t.Fatalf("analytics: %d %s", res.StatusCode, body)
	}
	if today := rep.Days[len(rep.Days)-1]; today.PageViews != 1 || today.PreviewViews != 2 || !strings.Contains(body, `"preview_views":2`) {
		t.Errorf("analytics' today %+v: want 1 page view and 2 preview views", today)
	}
	if p := analyticsPanel(rep, false); p.Days[len(p.Days)-1].PreviewViews != 2 || p.Days[len(p.Days)-1].PageViews != 1 {
		t.Errorf("the site page's panel's today: %+v", p.Days[len(p.Days)-1])
	}
}

// TestPreviewPromoteNoMix: while version 2 is made live again (the
// service's switch of the live pointer), concurrent readers of the live
// host see version 3 or version 2, each whole (its page with its own
// headers), and once one has seen 2 never 3 again; readers of the
// previews see their own version throughout.
func TestPreviewPromoteNoMix(t *testing.T) {
	f := newPreviewFixture(t)
	read := func(host string) (string, error) {
		req := httptest.NewRequest(http.MethodGet, "http://"+host+"/", nil)
		w := httptest.NewRecorder()
		f.mux.ServeHTTP(w, req)
		b, hdr := w.Body.String(), w.Header().Get("X-Test")
		switch {
		case w.Code == 200 && strings.HasSuffix(b, "<h1>three</h1>") && hdr == "":
			return "three", nil
		case w.Code == 200 && strings.HasSuffix(b, "<h1>two</h1>") && hdr == "v2":
			return "two", nil
		}
		return "", fmt.Errorf("%s: a mixed or wrong answer: %d %q X-Test %q", host, w.Code, b, hdr)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 4 {
		wg.Go(func() {
			seenNew := false
			for {
				select {
				case <-stop:
					return
				default:
				}
				v, err := read("prev.sites.test")
				if err == nil && seenNew && v == "three" {
					err = fmt.Errorf("the live host went back to version 3 after serving 2")
				}
				if err == nil {
					if p, perr := read("v3--prev.sites.test"); perr != nil || p != "three" {
						err = fmt.Errorf("v3's preview during the promote: %q %v", p, perr)
					}
				}
				if err != nil {
					errs <- err
					return
				}
				seenNew = seenNew || v == "two"
			}
		})
	}
	rec, err := f.app.FindRecordById("deployments", f.dep)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	if _, err := f.sd.svc.Rollback(context.Background(), rec, 2); err != nil {
		t.Fatal(err)
	}
	if v, err := read("prev.sites.test"); err != nil || v != "two" {
		t.Errorf("after the promote the live host serves %q %v", v, err)
	}
	time.Sleep(5 * time.Millisecond)
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestPreviewDraftAliasAndPrune: a draft is served at its preview host
// and not at the site's until promoted; an alias follows its deploys
// (the cached alias host too) and stops serving once deleted; a pruned
// version's host answers the plain 404.
func TestPreviewDraftAliasAndPrune(t *testing.T) {
	f := newPreviewFixture(t, func(c *Config) { c.KeepVersions = 5 })
	key := bearer(fixtureKey("alice"))
	deploy := func(body string) {
		t.Helper()
		if res, b := do(t, f.mux, http.MethodPut, "/deploy/"+f.dep, body, key); res.StatusCode != 200 {
			t.Fatalf("PUT %s: %d %s", body, res.StatusCode, b)
		}
	}
	want := func(host, content string, status int) {
		t.Helper()
		res, body := f.get(t, host, "/", nil)
		if res.StatusCode != status || (content != "" && !strings.Contains(body, content)) {
			t.Fatalf("%s: %d %.80q, want %d %q", host, res.StatusCode, body, status, content)
		}
	}
	want("staging--prev.sites.test", "", 404)
	deploy(`{"html":"<h1>four</h1>","draft":true,"alias":"staging"}`)
	want("prev.sites.test", "three", 200)
	want("v4--prev.sites.test", "four", 200)
	want("staging--prev.sites.test", "four", 200)

	deploy(`{"html":"<h1>five</h1>","draft":true,"alias":"staging"}`)
	want("staging--prev.sites.test", "five", 200) // the cached alias host follows
	want("prev.sites.test", "three", 200)
	if res, b := do(t, f.mux, http.MethodPost, "/deploy/"+f.dep+"/versions/5/promote", "", key); res.StatusCode != 200 {
		t.Fatalf("promote: %d %s", res.StatusCode, b)
	}
	want("prev.sites.test", "five", 200)
	want("v4--prev.sites.test", "four", 200)

	if res, b := do(t, f.mux, http.MethodDelete, "/deploy/"+f.dep+"/aliases/staging", "", key); res.StatusCode >= 300 {
		t.Fatalf("delete alias: %d %s", res.StatusCode, b)
	}
	want("staging--prev.sites.test", "", 404)

	want("v1--prev.sites.test", "one", 200) // cached, then pruned by the next deploy
	deploy(`{"html":"<h1>six</h1>"}`)
	want("v1--prev.sites.test", "", 404)
	want("v6--prev.sites.test", "six", 200)
}

// TestAllowCertificatePreviews: the on-demand decision allows a preview
// host exactly when its site is allowed and its version or alias exists,
// charged to its site's class; the plain listener sends preview hosts
// to https like their site.
func TestAllowCertificatePreviews(t *testing.T) {
	_, sd := newFixtureApp(t)
	for name, w := range map[string]struct {
		allowed bool
		class   certs.Class
	}{
		"v1--alice-site.sites.test":      {true, certs.Owned},
		"v1--anon-site.sites.test":       {true, certs.Anonymous},
		"v9--alice-site.sites.test":      {false, 0}, // no such version
		"staging--alice-site.sites.test": {false, 0}, // no such alias
		"v1--old-anon.sites.test":        {false, 0}, // its site expired
		"v1--nosuch.sites.test":          {false, 0},
		"v01--alice-site.sites.test":     {false, 0},
		"v1--alice-site.example.com":     {false, 0}, // custom domains have no previews
	} {
		class, err := sd.tls().AllowCertificate(name)
		if (err == nil) != w.allowed || (w.allowed && class != w.class) {
			t.Errorf("AllowCertificate(%q) = %v, %v; want allowed %v, %v", name, class, err, w.allowed, w.class)
		}
	}
	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("app")) })
	rec := httptest.NewRecorder()
	sd.tls().RedirectHandler(app, func(next http.Handler) http.Handler { return next }).
		ServeHTTP(rec, httptest.NewRequest("GET", "http://V1--alice-site.sites.test/x?y", nil))
	if got := rec.Header().Get("Location"); rec.Code != http.StatusPermanentRedirect || got != "https://v1--alice-site.sites.test/x?y" {
		t.Errorf("a preview host over plain HTTP: %d to %q", rec.Code, got)
	}
}
