package hooks

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/pocketbase/pocketbase/tests"
	"github.com/spf13/pflag"

	"sitedrop/hooks/internal/clitest"
	"sitedrop/sites"
	"sitedrop/sites/forms"
	"sitedrop/sites/store/s3store/s3test"
)

// settingsEditor edits the sitedrop settings record as an administrator
// does in the dashboard: PATCH through PocketBase's records API with a
// superuser's token, so the record hooks and the reload run as they do
// for /_/.
func settingsEditor(t *testing.T, app *tests.TestApp, mux http.Handler) (edit func(body string) (int, string), token string) {
	t.Helper()
	recs, err := app.FindAllRecords(sites.SettingsCollection)
	if err != nil || len(recs) != 1 {
		t.Fatalf("want the one settings record the migration made: %d, %v", len(recs), err)
	}
	id := recs[0].Id
	token = superuserToken(t, app)
	return func(body string) (int, string) {
		t.Helper()
		res, out := do(t, mux, http.MethodPatch, "/api/collections/"+sites.SettingsCollection+"/records/"+id, body,
			map[string]string{"Authorization": token, "Content-Type": "application/json"})
		return res.StatusCode, out
	}, token
}

// anonDeploy deploys html anonymously (slug "" for a generated one).
func anonDeploy(t *testing.T, mux http.Handler, slug, html string) (int, map[string]any) {
	t.Helper()
	req := map[string]any{"html": html}
	if slug != "" {
		req["slug"] = slug
	}
	body, _ := json.Marshal(req)
	res, out := do(t, mux, http.MethodPost, "/deploy", string(body), map[string]string{"Content-Type": "application/json"})
	var ans map[string]any
	if err := json.Unmarshal([]byte(out), &ans); err != nil {
		t.Fatalf("answer %d is not JSON: %s", res.StatusCode, out)
	}
	return res.StatusCode, ans
}

// TestAnonDeploysSwitchLive: an administrator turns anonymous deploys off
// in the settings record and the very next anonymous deploy is refused,
// 403 with a clear error, creating nothing, while keyed deploys go on;
// emptied again, the field gives the flag's value back (on). No restart.
func TestAnonDeploysSwitchLive(t *testing.T) {
	app, _ := newFixtureApp(t)
	defer app.Cleanup()
	mux := newMux(t, app)
	edit, _ := settingsEditor(t, app, mux)
	if code, ans := anonDeploy(t, mux, "before-off", "<h1>a</h1>"); code != 200 {
		t.Fatalf("anonymous deploy with the defaults: %d %v", code, ans)
	}
	if code, out := edit(`{"anon_deploys":"off"}`); code != 200 {
		t.Fatalf("turn anonymous deploys off: %d %s", code, out)
	}
	before, err := app.CountRecords(sites.DeploymentsCollection)
	if err != nil {
		t.Fatal(err)
	}
	code, ans := anonDeploy(t, mux, "while-off", "<h1>b</h1>")
	if code != http.StatusForbidden || ans["error"] != msgAnonDeploysOff {
		t.Fatalf("anonymous deploy while off: %d %v, want 403 %q", code, ans, msgAnonDeploysOff)
	}
	if after, _ := app.CountRecords(sites.DeploymentsCollection); after != before {
		t.Fatalf("a refused anonymous deploy changed the deployments: %d then %d", before, after)
	}
	if res, out := do(t, mux, http.MethodPost, "/deploy", `{"html":"<h1>k</h1>","slug":"keyed-while-off"}`,
		withHeaders(bearer(keyAlice), map[string]string{"Content-Type": "application/json"})); res.StatusCode != 200 {
		t.Fatalf("keyed deploy while anonymous ones are off: %d %s", res.StatusCode, out)
	}
	if code, out := edit(`{"anon_deploys":""}`); code != 200 {
		t.Fatalf("back to the flag: %d %s", code, out)
	}
	if code, ans := anonDeploy(t, mux, "after-on", "<h1>c</h1>"); code != 200 {
		t.Fatalf("anonymous deploy back on: %d %v", code, ans)
	}
}

// TestAnonDeploysFlagOff: --anon-deploys=false is the default the record
// overrides: off at start, on once the record says so.
func TestAnonDeploysFlagOff(t *testing.T) {
	app, _ := newFixtureApp(t, func(c *Config) { c.AnonDeploysOff = true })
	defer app.Cleanup()
	mux := newMux(t, app)
	if code, ans := anonDeploy(t, mux, "", "<h1>a</h1>"); code != http.StatusForbidden || ans["error"] != msgAnonDeploysOff {
		t.Fatalf("anonymous deploy with --anon-deploys=false: %d %v", code, ans)
	}
	edit, _ := settingsEditor(t, app, mux)
	if code, out := edit(`{"anon_deploys":"on"}`); code != 200 {
		t.Fatalf("turn anonymous deploys on: %d %s", code, out)
	}
	if code, ans := anonDeploy(t, mux, "", "<h1>a</h1>"); code != 200 {
		t.Fatalf("anonymous deploy turned on over the flag: %d %v", code, ans)
	}
}

// TestAnonLimitsChangeLive: the anonymous deploys' limits changed in the
// settings record apply to the next deploy: the deploys per hour (the
// count so far kept), the storage per IP, and the TTL of new sites.
func TestAnonLimitsChangeLive(t *testing.T) {
	app, _ := newFixtureApp(t) // --anon-deploys-per-hour 3
	defer app.Cleanup()
	mux := newMux(t, app)
	edit, _ := settingsEditor(t, app, mux)
	if code, ans := anonDeploy(t, mux, "", "<h1>1</h1>"); code != 200 {
		t.Fatalf("first anonymous deploy: %d %v", code, ans)
	}
	if code, out := edit(`{"anon_deploys_per_hour":1}`); code != 200 {
		t.Fatalf("lower the rate: %d %s", code, out)
	}
	if code, ans := anonDeploy(t, mux, "", "<h1>2</h1>"); code != http.StatusTooManyRequests {
		t.Fatalf("second anonymous deploy with 1 an hour: %d %v, want 429", code, ans)
	}
	if code, out := edit(`{"anon_deploys_per_hour":-1}`); code != 200 {
		t.Fatalf("lift the rate: %d %s", code, out)
	}
	for i := range 4 { // past the flag's 3
		if code, ans := anonDeploy(t, mux, "", "<h1>more</h1>"); code != 200 {
			t.Fatalf("anonymous deploy %d with no limit: %d %v", i, code, ans)
		}
	}

	if code, out := edit(`{"anon_storage_per_ip":"1KiB"}`); code != 200 {
		t.Fatalf("lower the storage: %d %s", code, out)
	}
	code, ans := anonDeploy(t, mux, "too-big", "<p>"+strings.Repeat("x", 2000)+"</p>")
	if code != http.StatusRequestEntityTooLarge || !strings.Contains(ans["error"].(string), "1 KiB") {
		t.Fatalf("a 2 KB anonymous deploy with 1KiB per IP: %d %v, want 413 naming 1 KiB", code, ans)
	}
	if code, out := edit(`{"anon_storage_per_ip":"","anon_ttl":"2h"}`); code != 200 {
		t.Fatalf("set the TTL: %d %s", code, out)
	}
	if code, ans := anonDeploy(t, mux, "two-hours", "<p>"+strings.Repeat("x", 2000)+"</p>"); code != 200 {
		t.Fatalf("the storage back to the flag's: %d %v", code, ans)
	}
	rec, err := app.FindFirstRecordByData(sites.DeploymentsCollection, sites.FieldSlug, "two-hours")
	if err != nil {
		t.Fatal(err)
	}
	if left := time.Until(sites.DeploymentOf(rec).ExpiresAt()); left < 2*time.Hour-time.Minute || left > 2*time.Hour {
		t.Fatalf("a site deployed with anon_ttl 2h expires in %s", left)
	}
}

// TestSettingsRecordRules: the dashboard meets the settings' rules: a
// value that is not valid is a 400 naming its field and changes nothing
// (the rules in force stay), and there is one record, to edit.
func TestSettingsRecordRules(t *testing.T) {
	app, sd := newFixtureApp(t)
	defer app.Cleanup()
	mux := newMux(t, app)
	edit, token := settingsEditor(t, app, mux)
	if code, out := edit(`{"anon_ttl":"3h"}`); code != 200 {
		t.Fatalf("set the TTL: %d %s", code, out)
	}
	for _, bad := range []struct{ body, field string }{
		{`{"anon_ttl":"soon"}`, "anon_ttl"},
		{`{"anon_ttl":"1s"}`, "anon_ttl"},
		{`{"anon_storage_per_ip":"lots"}`, "anon_storage_per_ip"},
		{`{"anon_storage_per_ip":"0"}`, "anon_storage_per_ip"},
		{`{"anon_deploys_per_hour":-2}`, "anon_deploys_per_hour"},
		{`{"anon_deploys":"maybe"}`, "anon_deploys"},
	} {
		if code, out := edit(bad.body); code != 400 || !strings.Contains(out, `"`+bad.field+`"`) {
			t.Errorf("%s: %d %s, want 400 naming %s", bad.body, code, out, bad.field)
		}
	}
	if p := sd.settings.Anon(); p.TTL != 3*time.Hour || p.StoragePerIP != sd.cfg.AnonStoragePerIP {
		t.Fatalf("the rules after refused edits: %+v", p)
	}
	res, out := do(t, mux, http.MethodPost, "/api/collections/"+sites.SettingsCollection+"/records", `{"anon_deploys":"off"}`,
		map[string]string{"Authorization": token, "Content-Type": "application/json"})
	if res.StatusCode != 400 || !strings.Contains(out, "one sitedrop settings record") {
		t.Fatalf("a second settings record: %d %s", res.StatusCode, out)
	}
	if !sd.settings.Anon().Enabled {
		t.Fatal("a refused second record turned anonymous deploys off")
	}
	// the moderation page's way: the service, through the same hooks
	if err := sd.settings.SaveOverrides(t.Context(), sites.AnonOverrides{TTL: "nope"}); err == nil {
		t.Fatal("SaveOverrides took a TTL that is not a duration")
	}
	if err := sd.settings.SaveOverrides(t.Context(), sites.AnonOverrides{Deploys: sites.SettingOff, TTL: "30m"}); err != nil {
		t.Fatal(err)
	}
	if p := sd.settings.Anon(); p.Enabled || p.TTL != 30*time.Minute {
		t.Fatalf("after SaveOverrides: %+v", p)
	}
	// deleted, the record gives the flags back; SaveOverrides makes a new one
	recs, err := app.FindAllRecords(sites.SettingsCollection)
	if err != nil || len(recs) != 1 {
		t.Fatalf("%d settings records, %v", len(recs), err)
	}
	if err := app.Delete(recs[0]); err != nil {
		t.Fatal(err)
	}
	if p := sd.settings.Anon(); p != sd.cfg.anonPolicy() {
		t.Fatalf("without a record: %+v, want the flags' %+v", p, sd.cfg.anonPolicy())
	}
	if err := sd.settings.SaveOverrides(t.Context(), sites.AnonOverrides{DeploysPerHour: 5}); err != nil {
		t.Fatal(err)
	}
	if p := sd.settings.Anon(); p.DeploysPerHour != 5 || !p.Enabled {
		t.Fatalf("after SaveOverrides with no record: %+v", p)
	}
}

// TestAnonHoldUntilClaimed: with anonymous sites kept unserved until
// claimed, the deploy's answer says so, every host of the new site (its
// preview too) answers the "awaiting claim" page (403, noindex, not
// stored), the claim link's page still works, and once an account claims
// the site it is served. A site deployed before the switch is served on.
func TestAnonHoldUntilClaimed(t *testing.T) {
	app, _ := newFixtureApp(t)
	defer app.Cleanup()
	mux := newMux(t, app)
	edit, _ := settingsEditor(t, app, mux)
	if code, ans := anonDeploy(t, mux, "served-before", "<h1>before</h1>"); code != 200 || ans["awaiting_claim"] != nil {
		t.Fatalf("anonymous deploy before the switch: %d %v", code, ans)
	}
	if code, out := edit(`{"anon_hold_until_claimed":"on"}`); code != 200 {
		t.Fatalf("hold anonymous sites: %d %s", code, out)
	}
	code, ans := anonDeploy(t, mux, "held-site", "<h1>held</h1>")
	if code != 200 || ans["awaiting_claim"] != true {
		t.Fatalf("anonymous deploy while held: %d %v, want awaiting_claim true", code, ans)
	}
	for _, host := range []string{"held-site.sites.test", "v1--held-site.sites.test"} {
		res, out := do(t, mux, http.MethodGet, "http://"+host+"/", "", nil)
		if res.StatusCode != http.StatusForbidden || !strings.Contains(out, "Awaiting claim") || strings.Contains(out, "<h1>held</h1>") ||
			res.Header.Get("X-Robots-Tag") == "" || !strings.Contains(res.Header.Get("Cache-Control"), "no-store") {
			t.Fatalf("%s before the claim: %d %v %.120q", host, res.StatusCode, res.Header, out)
		}
	}
	if res, out := do(t, mux, http.MethodGet, "http://served-before.sites.test/", "", nil); res.StatusCode != 200 || !strings.Contains(out, "<h1>before</h1>") {
		t.Fatalf("a site deployed before the switch: %d %.80q", res.StatusCode, out)
	}
	submit := func() (*http.Response, string) {
		t.Helper()
		return do(t, mux, http.MethodPost, "/submit/"+ans["id"].(string), `{"email":"a@example.com"}`, map[string]string{"Content-Type": "application/json"})
	}
	if res, out := submit(); res.StatusCode != http.StatusForbidden || !strings.Contains(out, msgSiteAwaitingClaim) {
		t.Fatalf("a form posted to the held site: %d %s", res.StatusCode, out)
	}
	if n, _ := app.CountRecords(forms.SubmissionsCollection); n != 0 {
		t.Fatalf("%d submissions stored for a held site", n)
	}
	claimURL := ans["claim_url"].(string)
	if res, out := do(t, mux, http.MethodGet, claimURL, "", nil); res.StatusCode != 200 || !strings.Contains(out, "held-site") ||
		!strings.Contains(out, `data-testid="claim-awaiting"`) {
		t.Fatalf("the claim link's page: %d %.200q", res.StatusCode, out)
	}
	body, _ := json.Marshal(map[string]any{"slug": "held-site", "claim_token": ans["claim_token"]})
	if res, out := do(t, mux, http.MethodPost, "/deploy/claim", string(body),
		withHeaders(bearer(keyAlice), map[string]string{"Content-Type": "application/json"})); res.StatusCode != 200 {
		t.Fatalf("claim: %d %s", res.StatusCode, out)
	}
	rec, err := app.FindFirstRecordByData(sites.DeploymentsCollection, sites.FieldSlug, "held-site")
	if err != nil {
		t.Fatal(err)
	}
	if sites.DeploymentOf(rec).AwaitingClaim() {
		t.Fatal("a claimed site still awaits its claim")
	}
	if res, out := do(t, mux, http.MethodGet, "http://held-site.sites.test/", "", nil); res.StatusCode != 200 || !strings.Contains(out, "<h1>held</h1>") {
		t.Fatalf("the site once claimed: %d %.80q", res.StatusCode, out)
	}
	if res, out := submit(); res.StatusCode >= 300 {
		t.Fatalf("a form posted to the claimed site: %d %s", res.StatusCode, out)
	}
}

// TestAwaitingClaimClearedByOwner: an owner set from the dashboard (not
// the claim link) serves the site too: the record hook that makes an
// owned site never expire clears the hold.
func TestAwaitingClaimClearedByOwner(t *testing.T) {
	app, _ := newFixtureApp(t, func(c *Config) { c.AnonHoldUntilClaimed = true })
	defer app.Cleanup()
	mux := newMux(t, app)
	if code, ans := anonDeploy(t, mux, "held-flag", "<h1>f</h1>"); code != 200 || ans["awaiting_claim"] != true {
		t.Fatalf("anonymous deploy with --anon-hold-until-claimed: %d %v", code, ans)
	}
	rec, err := app.FindFirstRecordByData(sites.DeploymentsCollection, sites.FieldSlug, "held-flag")
	if err != nil {
		t.Fatal(err)
	}
	alice, err := app.FindAuthRecordByEmail("users", "alice@example.com")
	if err != nil {
		t.Fatal(err)
	}
	rec.Set(sites.FieldOwner, alice.Id)
	if err := app.Save(rec); err != nil {
		t.Fatal(err)
	}
	if res, out := do(t, mux, http.MethodGet, "http://held-flag.sites.test/", "", nil); res.StatusCode != 200 {
		t.Fatalf("the site given an owner: %d %.80q", res.StatusCode, out)
	}
}

// TestBrowserDropAwaitingClaim: signed out, with anonymous sites kept
// unserved until claimed, the drop zone's result says so beside the claim
// link ("Published at", not "Live at"), and the site answers the
// "awaiting claim" page.
func TestBrowserDropAwaitingClaim(t *testing.T) {
	b := newBrowserEnv(t, func(c *Config) { c.AnonHoldUntilClaimed = true })
	dir := writeTree(t, map[string]string{"index.html": "<!doctype html><title>Held</title><h1>held</h1>"})
	b.Step("choose a folder on the home page", chromedp.Navigate(b.WebURL+"/"), chromedp.WaitVisible(testid("drop-target")),
		chromedp.SetUploadFiles(testid("drop-folder"), []string{dir}))
	site := b.dropWait()
	if b.Count(`[data-testid=drop-held]:not([hidden])`) != 1 || !strings.Contains(b.Text(testid("drop-held")), "awaiting claim") {
		t.Fatalf("the result does not say the site awaits its claim: %q", b.Text(testid("drop-result")))
	}
	if txt := b.Text(testid("drop-result")); !strings.Contains(txt, "Published at") || strings.Contains(txt, "Live at") {
		t.Errorf("the result reads %q", txt)
	}
	if b.Count(`[data-testid=drop-claim-link]`) != 1 || b.Text(testid("drop-claim-link")) == "" {
		t.Error("no claim link beside the notice")
	}
	if code, body := b.liveFile(site, "/"); code != http.StatusForbidden || !strings.Contains(body, "Awaiting claim") {
		t.Fatalf("the site before its claim: %d %.80q", code, body)
	}
}

// TestHomePageFollowsAnonSettings: the landing page reads the rules in
// force at each request: the anonymous TTL it announces, the storage its
// drop zone checks before uploading, and, with anonymous deploys off, an
// invitation to sign in instead of a drop zone that would be refused
// (a signed-in visitor keeps the zone).
func TestHomePageFollowsAnonSettings(t *testing.T) {
	app, _ := newFixtureApp(t)
	defer app.Cleanup()
	mux := newMux(t, app)
	edit, _ := settingsEditor(t, app, mux)
	home := func(headers map[string]string) string {
		t.Helper()
		res, out := do(t, mux, http.MethodGet, "/", "", headers)
		if res.StatusCode != 200 {
			t.Fatalf("GET /: %d", res.StatusCode)
		}
		return out
	}
	if out := home(nil); !strings.Contains(out, "live for 24 hours") || !strings.Contains(out, `data-testid="drop-deploy"`) {
		t.Fatalf("the home page with the flags: %.300q", out)
	}
	if code, out := edit(`{"anon_ttl":"2h","anon_storage_per_ip":"5MiB"}`); code != 200 {
		t.Fatalf("edit: %d %s", code, out)
	}
	if out := home(nil); !strings.Contains(out, "live for 2 hours") || !strings.Contains(out, `data-max-site="5242880"`) {
		t.Fatalf("the home page after the edit does not announce 2 hours and 5 MiB")
	}
	if code, out := edit(`{"anon_deploys":"off"}`); code != 200 {
		t.Fatalf("edit: %d %s", code, out)
	}
	out := home(nil)
	if !strings.Contains(out, `data-testid="anon-off"`) || strings.Contains(out, `data-testid="drop-deploy"`) {
		t.Fatalf("the home page with anonymous deploys off: %.300q", out)
	}
	alice, err := app.FindAuthRecordByEmail("users", "alice@example.com")
	if err != nil {
		t.Fatal(err)
	}
	mustSession(t, app, alice, "home-session")
	if out := home(cookie("home-session")); !strings.Contains(out, `data-testid="drop-deploy"`) || strings.Contains(out, `data-testid="anon-off"`) {
		t.Fatal("a signed-in visitor lost the drop zone with anonymous deploys off")
	}
}

// TestLLMSTxtFollowsAnonSettings: /llms.txt tells an agent the anonymous
// rules in force: the TTL and rate an administrator set, the hold until
// claimed, and that every deploy needs a key while anonymous ones are off.
func TestLLMSTxtFollowsAnonSettings(t *testing.T) {
	app, _ := newFixtureApp(t)
	defer app.Cleanup()
	mux := newMux(t, app)
	edit, _ := settingsEditor(t, app, mux)
	llms := func() string {
		t.Helper()
		res, out := do(t, mux, http.MethodGet, "/llms.txt", "", nil)
		if res.StatusCode != 200 || strings.Contains(out, "<no value>") {
			t.Fatalf("GET /llms.txt: %d %q", res.StatusCode, out)
		}
		return out
	}
	if out := llms(); !strings.Contains(out, "expires after 24 hours. Anonymous deploys: 3 an hour") || strings.Contains(out, "awaiting claim") {
		t.Fatalf("with the flags: %q", out)
	}
	if code, out := edit(`{"anon_ttl":"2h","anon_deploys_per_hour":7,"anon_hold_until_claimed":"on"}`); code != 200 {
		t.Fatalf("edit: %d %s", code, out)
	}
	if out := llms(); !strings.Contains(out, "expires after 2 hours. Anonymous deploys: 7 an hour") || !strings.Contains(out, `"awaiting claim" page`) {
		t.Fatalf("after the edit: %q", out)
	}
	if code, out := edit(`{"anon_deploys":"off"}`); code != 200 {
		t.Fatalf("edit: %d %s", code, out)
	}
	if out := llms(); !strings.Contains(out, "Anonymous deploys are turned off on this server") || strings.Contains(out, "claim_url") {
		t.Fatalf("with anonymous deploys off: %q", out)
	}
}

// TestCLIDeployAwaitingClaim: the command line tells an anonymous
// deployer that the site is not shown until claimed.
func TestCLIDeployAwaitingClaim(t *testing.T) {
	clitest.CleanEnv(t)
	app, _ := newFixtureApp(t, func(c *Config) { c.AnonHoldUntilClaimed = true })
	defer app.Cleanup()
	srv := httptest.NewServer(newMux(t, app))
	defer srv.Close()
	dir := writeTree(t, map[string]string{"index.html": "<p>held</p>"})
	_, errOut, err := clitest.Run(t, cliCommand(t, "deploy"), "--server", srv.URL, dir)
	if err != nil || !strings.Contains(errOut, "unless claimed") || !strings.Contains(errOut, `"awaiting claim" page`) {
		t.Fatalf("anonymous deploy held until claimed: %v %q", err, errOut)
	}
}

// TestMCPDeployFollowsAnonSettings: the MCP deploy tool, which calls the
// API in process, meets the rules in force: an agent is told a site is
// not shown until claimed, and is refused with the API's words once
// anonymous deploys are off.
func TestMCPDeployFollowsAnonSettings(t *testing.T) {
	env := newMCPEnv(t)
	cs := env.connect(t, "", "")
	if err := env.sd.settings.SaveOverrides(t.Context(), sites.AnonOverrides{HoldUntilClaimed: sites.SettingOn}); err != nil {
		t.Fatal(err)
	}
	text, sc := mustTool(t, cs, "deploy", map[string]any{"html": "<p>agent</p>"})
	if !strings.Contains(text, `"awaiting claim" page`) || sc["awaiting_claim"] != true {
		t.Fatalf("an anonymous deploy held until claimed: %q %v", text, sc)
	}
	if err := env.sd.settings.SaveOverrides(t.Context(), sites.AnonOverrides{Deploys: sites.SettingOff}); err != nil {
		t.Fatal(err)
	}
	mustToolError(t, cs, "deploy", map[string]any{"html": "<p>agent</p>"}, msgAnonDeploysOff)
}

// TestReplicaAwaitingClaim: the published document carries the hold, so
// a replica, with no database, answers the "awaiting claim" page for an
// anonymous site held until claimed, and serves it once it is claimed.
func TestReplicaAwaitingClaim(t *testing.T) {
	srv := s3test.Start(t)
	url := srv.URL(srv.NewBucket(t), "sd")
	app, sd := newBareApp(t, func(c *Config) { c.Store = url })
	defer app.Cleanup()
	alice := mustUser(t, app, "alice@example.com", sites.PlanFree, fixtureKey("alice"))
	rep := startReplica(t, sd)
	c, err := sd.svc.Create(t.Context(), sites.CreateParams{Slug: "rep-held", Upload: htmlUpload("<h1>held</h1>"),
		AnonTTL: time.Hour, HoldUntilClaimed: true})
	if err != nil {
		t.Fatal(err)
	}
	flush(t, sd)
	rep.poll(t)
	if code, body := rep.get(t, "rep-held.sites.test", "/"); code != http.StatusForbidden || !strings.Contains(body, "Awaiting claim") {
		t.Fatalf("replica before the claim: %d %.80q", code, body)
	}
	if _, err := sd.svc.Claim(context.Background(), alice, "rep-held", c.ClaimToken); err != nil {
		t.Fatal(err)
	}
	flush(t, sd)
	rep.poll(t)
	if code, body := rep.get(t, "rep-held.sites.test", "/"); code != 200 || !strings.Contains(body, "<h1>held</h1>") {
		t.Fatalf("replica once claimed: %d %.80q", code, body)
	}
}

// TestAnonFlags: --anon-deploys is on by default, bare or =true keeps it
// on, =false turns anonymous deploys off; --anon-hold-until-claimed is off
// by default. Both are the defaults the settings record overrides.
func TestAnonFlags(t *testing.T) {
	for _, c := range []struct {
		args      []string
		off, hold bool
	}{
		{nil, false, false},
		{[]string{"--anon-deploys"}, false, false},
		{[]string{"--anon-deploys=false"}, true, false},
		{[]string{"--anon-deploys=false", "--anon-deploys=true"}, false, false},
		{[]string{"--anon-hold-until-claimed"}, false, true},
	} {
		cfg := DefaultConfig()
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		BindFlags(fs, &cfg)
		if err := fs.Parse(c.args); err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if cfg.AnonDeploysOff != c.off || cfg.AnonHoldUntilClaimed != c.hold {
			t.Errorf("%v: off %v hold %v, want %v %v", c.args, cfg.AnonDeploysOff, cfg.AnonHoldUntilClaimed, c.off, c.hold)
		}
		if p := cfg.anonPolicy(); p.Enabled == c.off || p.HoldUntilClaimed != c.hold {
			t.Errorf("%v: policy %+v", c.args, p)
		}
	}
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	cfg := DefaultConfig()
	BindFlags(fs, &cfg)
	if f := fs.Lookup("anon-deploys"); f.DefValue != "true" {
		t.Errorf("--anon-deploys shows the default %q in the help", f.DefValue)
	}
	if err := fs.Parse([]string{"--anon-deploys=maybe"}); err == nil {
		t.Error("--anon-deploys=maybe parsed")
	}
}
