package hooks

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/hooks/server/certs"
	"sitedrop/sites"
	"sitedrop/sites/store/s3store/s3test"
)

// expireOldSlug moves the expiry of the kept old slug back to the past,
// as 30 days passing would.
func expireOldSlug(t testing.TB, app core.App, slug string) {
	t.Helper()
	rec, err := app.FindFirstRecordByData(sites.SlugRedirectsCollection, sites.FieldRedirectSlug, slug)
	if err != nil {
		t.Fatal(err)
	}
	rec.Set(sites.FieldRedirectExpiresAt, time.Now().Add(-time.Second))
	if err := app.Save(rec); err != nil {
		t.Fatal(err)
	}
}

// TestRenamedSiteOldHostRedirects: after a rename the new host serves
// the site; the old host, and its old preview hosts, answer 301 to the
// same path and query on the new ones (scheme-relative, port kept), may
// have a certificate meanwhile, and follow a second rename; once the old
// slug expires its host is a plain 404, refused a certificate, and its
// slug is free for anyone.
func TestRenamedSiteOldHostRedirects(t *testing.T) {
	app, sd := newFixtureApp(t)
	defer app.Cleanup()
	mux := newMux(t, app)
	if res, b := do(t, mux, http.MethodPost, "/deploy/"+idAliceSite+"/rename", `{"slug":"alice-new"}`, bearer(keyAlice)); res.StatusCode != 200 {
		t.Fatalf("rename: %d %s", res.StatusCode, b)
	}
	moved := func(host, target, want string) {
		t.Helper()
		res, b := do(t, mux, http.MethodGet, "http://"+host+target, "", nil)
		if res.StatusCode != http.StatusMovedPermanently || res.Header.Get("Location") != want {
			t.Fatalf("%s%s: %d to %q (%.80q), want 301 to %q", host, target, res.StatusCode, res.Header.Get("Location"), b, want)
		}
	}
	moved("alice-site.sites.test", "/docs/a%20b?x=1", "//alice-new.sites.test/docs/a%20b?x=1")
	moved("alice-site.sites.test:8090", "/", "//alice-new.sites.test:8090/")
	moved("v1--alice-site.sites.test", "/p", "//v1--alice-new.sites.test/p")
	for _, host := range []string{"alice-new.sites.test", "v1--alice-new.sites.test"} {
		if res, b := do(t, mux, http.MethodGet, "http://"+host+"/", "", nil); res.StatusCode != 200 || !strings.Contains(b, "<h1>alice</h1>") {
			t.Fatalf("%s: %d %.80q", host, res.StatusCode, b)
		}
	}
	tls := sd.tls()
	for _, name := range []string{"alice-site.sites.test", "v1--alice-site.sites.test", "alice-new.sites.test"} {
		if class, err := tls.AllowCertificate(name); err != nil || class != certs.Owned {
			t.Errorf("AllowCertificate(%q) = %v, %v while it serves or redirects", name, class, err)
		}
	}

	// a second rename: both old slugs lead to the third
	if res, b := do(t, mux, http.MethodPost, "/deploy/"+idAliceSite+"/rename", `{"slug":"alice-third"}`, bearer(keyAlice)); res.StatusCode != 200 {
		t.Fatalf("second rename: %d %s", res.StatusCode, b)
	}
	moved("alice-site.sites.test", "/", "//alice-third.sites.test/")
	moved("alice-new.sites.test", "/", "//alice-third.sites.test/")

	// 30 days later
	expireOldSlug(t, app, "alice-site")
	if res, b := do(t, mux, http.MethodGet, "http://alice-site.sites.test/", "", nil); res.StatusCode != 404 || !strings.Contains(b, "Site not found") {
		t.Fatalf("expired old host: %d %.80q", res.StatusCode, b)
	}
	if _, err := tls.AllowCertificate("alice-site.sites.test"); err == nil {
		t.Error("an expired old slug's host may have a certificate")
	}
	sd.upkeep.Expire()
	if n, _ := app.CountRecords(sites.SlugRedirectsCollection); n != 1 {
		t.Fatalf("%d old slugs kept after the purge, want alice-new's only", n)
	}
	if res, b := do(t, mux, http.MethodPost, "/deploy", `{"html":"<p>bob's now</p>","slug":"alice-site"}`, bearer(keyBob)); res.StatusCode != 200 {
		t.Fatalf("the freed slug: %d %s", res.StatusCode, b)
	}
	if res, b := do(t, mux, http.MethodGet, "http://alice-site.sites.test/", "", nil); res.StatusCode != 200 || !strings.Contains(b, "bob's now") {
		t.Fatalf("the freed slug's new site: %d %.80q", res.StatusCode, b)
	}
}

// TestPausedSiteServesPausedPage: a paused site answers every path of
// its host and of its preview hosts with the paused page: 503,
// Retry-After, noindex, not cached (HEAD: no body); it keeps its
// certificate; resumed, it serves its files again.
func TestPausedSiteServesPausedPage(t *testing.T) {
	app, sd := newFixtureApp(t)
	defer app.Cleanup()
	mux := newMux(t, app)
	if res, b := do(t, mux, http.MethodPost, "/deploy/"+idAliceSite+"/pause", "", bearer(keyAlice)); res.StatusCode != 200 {
		t.Fatalf("pause: %d %s", res.StatusCode, b)
	}
	for _, target := range []string{"http://alice-site.sites.test/", "http://alice-site.sites.test/about", "http://v1--alice-site.sites.test/"} {
		res, b := do(t, mux, http.MethodGet, target, "", nil)
		h := res.Header
		if res.StatusCode != http.StatusServiceUnavailable || !strings.Contains(b, "Site paused") || strings.Contains(b, "<h1>alice</h1>") ||
			h.Get("Retry-After") != "3600" || h.Get("X-Robots-Tag") != "noindex" || h.Get("Cache-Control") != "no-store" ||
			!strings.HasPrefix(h.Get("Content-Type"), "text/html") {
			t.Fatalf("%s: %d %v %.200q", target, res.StatusCode, h, b)
		}
	}
	if res, b := do(t, mux, http.MethodHead, "http://alice-site.sites.test/", "", nil); res.StatusCode != 503 || b != "" {
		t.Fatalf("HEAD: %d %q", res.StatusCode, b)
	}
	if _, err := sd.tls().AllowCertificate("alice-site.sites.test"); err != nil {
		t.Errorf("a paused site lost its certificate: %v", err)
	}
	if res, b := do(t, mux, http.MethodPost, "/deploy/"+idAliceSite+"/resume", "", bearer(keyAlice)); res.StatusCode != 200 {
		t.Fatalf("resume: %d %s", res.StatusCode, b)
	}
	if res, b := do(t, mux, http.MethodGet, "http://alice-site.sites.test/", "", nil); res.StatusCode != 200 || !strings.Contains(b, "<h1>alice</h1>") {
		t.Fatalf("resumed: %d %.80q", res.StatusCode, b)
	}
}

// TestReplicaRenameAndPause: a replica (no database) follows the
// published documents: the old host's document becomes the redirect
// (and the old preview hosts' too), the paused page reaches the site's
// hosts and previews, and an expired old slug's document is removed.
func TestReplicaRenameAndPause(t *testing.T) {
	srv := s3test.Start(t)
	url := srv.URL(srv.NewBucket(t), "sd")
	app, sd := newBareApp(t, func(c *Config) { c.Store = url })
	defer app.Cleanup()
	alice := mustUser(t, app, "alice@example.com", sites.PlanPro, fixtureKey("alice"))
	ctx := context.Background()
	c, err := sd.svc.Create(ctx, sites.CreateParams{Owner: alice, Slug: "rep-old", Upload: bigSite("one")})
	if err != nil {
		t.Fatal(err)
	}
	rep := startReplica(t, sd)
	flush(t, sd)
	rep.poll(t)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(host, path string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, rep.url+path, nil)
		req.Host = host
		res, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, string(b)
	}
	if res, b := get("rep-old.sites.test", "/"); res.StatusCode != 200 || !strings.Contains(b, "<h1>one</h1>") {
		t.Fatalf("before the rename: %d %.80q", res.StatusCode, b)
	}

	if _, err := sd.svc.Rename(context.Background(), c.Record, "rep-new"); err != nil {
		t.Fatal(err)
	}
	flush(t, sd)
	rep.poll(t)
	for host, want := range map[string]string{
		"rep-old.sites.test":     "//rep-new.sites.test/a?b",
		"v1--rep-old.sites.test": "//v1--rep-new.sites.test/a?b",
	} {
		if res, b := get(host, "/a?b"); res.StatusCode != 301 || res.Header.Get("Location") != want {
			t.Fatalf("replica %s: %d to %q (%.80q), want 301 to %q", host, res.StatusCode, res.Header.Get("Location"), b, want)
		}
	}
	if res, b := get("rep-new.sites.test", "/"); res.StatusCode != 200 || !strings.Contains(b, "<h1>one</h1>") {
		t.Fatalf("replica, new host: %d %.80q", res.StatusCode, b)
	}
	if d := published(t, sd, "rep-old.sites.test"); d == nil || d.Site.MovedTo != "rep-new" || len(d.Site.Files) != 0 {
		t.Fatalf("the old host's document: %+v", d)
	}

	if _, err := sd.svc.SetPaused(context.Background(), c.Record, true); err != nil {
		t.Fatal(err)
	}
	flush(t, sd)
	rep.poll(t)
	for _, host := range []string{"rep-new.sites.test", "v1--rep-new.sites.test"} {
		res, b := get(host, "/big.bin")
		if res.StatusCode != 503 || !strings.Contains(b, "Site paused") || res.Header.Get("Retry-After") != "3600" || res.Header.Get("X-Robots-Tag") != "noindex" {
			t.Fatalf("replica, paused %s: %d %v %.80q", host, res.StatusCode, res.Header, b)
		}
	}

	expireOldSlug(t, app, "rep-old")
	sd.upkeep.Expire()
	flush(t, sd)
	rep.poll(t)
	if res, _ := get("rep-old.sites.test", "/"); res.StatusCode != 404 {
		t.Fatalf("replica, expired old host: %d", res.StatusCode)
	}
	if d := published(t, sd, "rep-old.sites.test"); d != nil {
		t.Fatalf("the expired old host's document is still published: %+v", d)
	}
}

// TestRenameByAnyWriter: a slug changed by a plain record save (the
// admin dashboard's way) keeps the old one for the site too, and meets
// the same refusal of another site's kept slug; deleting the site frees
// its kept slugs at once.
func TestRenameByAnyWriter(t *testing.T) {
	app, _ := newFixtureApp(t)
	defer app.Cleanup()
	rec, err := app.FindRecordById(sites.DeploymentsCollection, idAliceSite)
	if err != nil {
		t.Fatal(err)
	}
	rec.Set(sites.FieldSlug, "alice-admin")
	if err := app.Save(rec); err != nil {
		t.Fatal(err)
	}
	r, err := sites.FindSlugRedirect(app, "alice-site", time.Now())
	if err != nil || r.DeploymentID() != idAliceSite {
		t.Fatalf("the old slug after a dashboard rename: %+v %v", r, err)
	}
	if code, _ := siteGet(t, app, "alice-site.sites.test", "/"); code != 301 {
		t.Fatalf("old host: %d", code)
	}
	bob, err := app.FindRecordById(sites.DeploymentsCollection, idBobSite)
	if err != nil {
		t.Fatal(err)
	}
	bob.Set(sites.FieldSlug, "alice-site")
	if err := app.Save(bob); err == nil {
		t.Fatal("a dashboard save took another site's kept slug")
	}
	if got := slugOf(t, app, idBobSite); got != "bob-site" {
		t.Fatalf("bob's slug %q", got)
	}
	if err := app.Delete(rec); err != nil {
		t.Fatal(err)
	}
	if n, _ := app.CountRecords(sites.SlugRedirectsCollection); n != 0 {
		t.Fatalf("%d old slugs kept after the site was deleted", n)
	}
	if code, _ := siteGet(t, app, "alice-site.sites.test", "/"); code != 404 {
		t.Fatalf("old host of a deleted site: %d", code)
	}
}
