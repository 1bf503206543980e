package hooks

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tests"

	"sitedrop/sites"
	"sitedrop/sites/audit"
)

// takedownOf is the takedown reason of the deployment id ("" when none).
func takedownOf(t testing.TB, app *tests.TestApp, id string) *sites.Deployment {
	t.Helper()
	dep, err := sites.FindDeployment(app, id)
	if err != nil {
		t.Fatal(err)
	}
	return dep
}

// TestTakedownAPI: only a superuser takes a site down, with a bounded
// reason; every host of it then answers the 410 page with the reason, its owner is mailed, its forms answer 410, and every
// writer (redeploy, rename, pause, resume, rollback, promote, and the
// dashboard's records API) is refused 403 with a clear error, changing
// nothing; the data is kept; a restore serves it again, mails the owner,
// and lets it deploy again.
func TestTakedownAPI(t *testing.T) {
	t.Parallel()
	app, _ := newFixtureApp(t)
	mux := newMux(t, app)
	token := superuserToken(t, app)
	admin := map[string]string{"Authorization": token, "Content-Type": "application/json"}
	alice := map[string]string{"Authorization": "Bearer " + keyAlice, "Content-Type": "application/json"}
	takedown, restore := "/admin/deploy/"+idAliceSite+"/takedown", "/admin/deploy/"+idAliceSite+"/restore"
	expect := func(method, url, body string, h map[string]string, status int, want string) string {
		t.Helper()
		res, out := do(t, mux, method, url, body, h)
		if res.StatusCode != status || !strings.Contains(out, want) {
			t.Fatalf("%s %s: %d %.300s, want %d %q", method, url, res.StatusCode, out, status, want)
		}
		return out
	}
	notTakenDown := func() {
		t.Helper()
		if d := takedownOf(t, app, idAliceSite); d.TakenDown() {
			t.Fatalf("taken down by a refused request: %q", d.TakedownReason())
		}
	}

	// refusals change nothing
	expect(http.MethodPost, takedown, `{"reason":"phishing"}`, nil, 401, `"error":`)
	expect(http.MethodPost, takedown, `{"reason":"phishing"}`, alice, 401, `"error":`)
	expect(http.MethodPost, takedown, `{}`, admin, 400, `{"error":"reason is required"}`)
	expect(http.MethodPost, takedown, `{"reason":"   "}`, admin, 400, `{"error":"a takedown needs a reason"}`)
	expect(http.MethodPost, takedown, `{"reason":"`+strings.Repeat("x", sites.MaxTakedownReasonLen+1)+`"}`, admin, 400, "at most 500")
	expect(http.MethodPost, takedown, `{"reason":"a\u0007b"}`, admin, 400, "control character")
	expect(http.MethodPost, "/admin/deploy/nosuchsite00001/takedown", `{"reason":"phishing"}`, admin, 404, `{"error":"Deployment not found"}`)
	expect(http.MethodGet, takedown, "", admin, 405, `{"error":"Method not allowed"}`)
	notTakenDown()
	if n := app.TestMailer.TotalSend(); n != 0 {
		t.Fatalf("%d mails after refusals", n)
	}

	out := expect(http.MethodPost, takedown, `{"reason":"  Phishing <b>bank</b> login  "}`, admin, 200, `"taken_down":true`)
	for _, want := range []string{`"id":"` + idAliceSite + `"`, `"reason":"Phishing \u003cb\u003ebank\u003c/b\u003e login"`, `"taken_down_by":"admin@example.com"`, `"taken_down_at":"`} {
		if !strings.Contains(out, want) {
			t.Errorf("takedown answer %s lacks %s", out, want)
		}
	}
	d := takedownOf(t, app, idAliceSite)
	if d.TakedownReason() != "Phishing <b>bank</b> login" || d.TakenDownAt().IsZero() || d.TakenDownBy() != "admin@example.com" {
		t.Fatalf("stored takedown: %q %v %q", d.TakedownReason(), d.TakenDownAt(), d.TakenDownBy())
	}
	live := d.LiveVersion()
	for _, host := range []string{"alice-site.sites.test"} { // previews, domains: TestTakedownOnReplica
		code, body := siteGet(t, app, host, "/")
		if code != http.StatusGone || !strings.Contains(body, "This site was taken down for: Phishing &lt;b&gt;bank&lt;/b&gt; login") || strings.Contains(body, "<h1>alice</h1>") {
			t.Fatalf("%s: %d %.300q", host, code, body)
		}
	}
	msg := app.TestMailer.LastMessage()
	if app.TestMailer.TotalSend() != 1 || msg.To[0].Address != "alice@example.com" || msg.Subject != "Your site alice-site was taken down" ||
		!strings.Contains(msg.Text, "This site was taken down for: Phishing <b>bank</b> login") || !strings.Contains(msg.HTML, "Phishing &lt;b&gt;bank&lt;/b&gt; login") {
		t.Fatalf("the owner's mail: %d sent, %+v", app.TestMailer.TotalSend(), msg)
	}

	// the owner's status says so
	expect(http.MethodGet, "/deploy/"+idAliceSite, "", alice, 200, `"taken_down":"Phishing \u003cb\u003ebank\u003c/b\u003e login"`)

	// every writer refused, nothing changed
	refused := `{"error":"` + msgTakenDown + `"}`
	expect(http.MethodPut, "/deploy/"+idAliceSite, `{"html":"<h1>again</h1>"}`, alice, 403, refused)
	expect(http.MethodPost, "/deploy/"+idAliceSite+"/rename", `{"slug":"alice-elsewhere"}`, alice, 403, refused)
	expect(http.MethodPost, "/deploy/"+idAliceSite+"/pause", "", alice, 403, refused)
	expect(http.MethodPost, "/deploy/"+idAliceSite+"/rollback", `{"version":1}`, alice, 403, refused)
	expect(http.MethodPatch, "/api/collections/deployments/records/"+idAliceSite, `{"slug":"admin-renamed"}`, admin, 403, "taken down")
	expect(http.MethodPost, "/submit/"+idAliceSite, `{"name":"x"}`, map[string]string{"Content-Type": "application/json"}, 410, `{"error":"`+msgSiteTakenDown+`"}`)
	d = takedownOf(t, app, idAliceSite)
	if d.Slug() != "alice-site" || d.LiveVersion() != live || d.Paused() || !d.TakenDown() {
		t.Fatalf("a refused write changed the site: %q %q paused %v", d.Slug(), d.LiveVersion(), d.Paused())
	}
	if n, err := app.CountRecords(sites.VersionsCollection, dbxDeployment(idAliceSite)); err != nil || n != 1 {
		t.Fatalf("%d versions after a refused redeploy (%v)", n, err)
	}
	// the dashboard may still edit what is not refused (a title)
	expect(http.MethodPatch, "/api/collections/deployments/records/"+idAliceSite, `{"title":"Seized"}`, admin, 200, `"title":"Seized"`)

	// restore: served again, mailed, deploys again
	expect(http.MethodPost, restore, "", admin, 200, `"taken_down":false`)
	if out := expect(http.MethodGet, "/deploy/"+idAliceSite, "", alice, 200, `"paused":false`); strings.Contains(out, "taken_down") {
		t.Fatalf("restored, the status still says taken down: %s", out)
	}
	if code, body := siteGet(t, app, "alice-site.sites.test", "/"); code != 200 || !strings.Contains(body, "<h1>alice</h1>") {
		t.Fatalf("restored site: %d %.100q", code, body)
	}
	if d := takedownOf(t, app, idAliceSite); d.TakenDown() || !d.TakenDownAt().IsZero() || d.TakenDownBy() != "" {
		t.Fatalf("restored, still: %q %v %q", d.TakedownReason(), d.TakenDownAt(), d.TakenDownBy())
	}
	if msg := app.TestMailer.LastMessage(); app.TestMailer.TotalSend() != 2 || msg.Subject != "Your site alice-site was restored" {
		t.Fatalf("the restore mail: %d sent, %q", app.TestMailer.TotalSend(), msg.Subject)
	}
	expect(http.MethodPost, restore, "", admin, 200, `"taken_down":false`) // again: nothing changes
	// the audit log names the superuser and their address, once each
	// (the dashboard's PATCH above changed the title only)
	for _, action := range []string{audit.ActionTakedown, audit.ActionRestore} {
		got := auditEntries(t, app, action, idAliceSite)
		if len(got) != 1 || got[0].ActorKind != audit.KindSuperuser || got[0].IP != testClientIP {
			t.Errorf("audit entries of %s: %+v, want one by the superuser from %s", action, got, testClientIP)
		}
	}
	if n := app.TestMailer.TotalSend(); n != 2 {
		t.Fatalf("%d mails after a second restore", n)
	}
	expect(http.MethodPut, "/deploy/"+idAliceSite, `{"html":"<h1>again</h1>"}`, alice, 200, `"slug":"alice-site"`)
}

// TestTakedownFromDashboard: a superuser types a reason into the
// dashboard's record (PocketBase's records API): the site is taken down
// as through the API (who and when recorded, the owner mailed, writes
// refused); emptying it restores the site.
func TestTakedownFromDashboard(t *testing.T) {
	t.Parallel()
	app, _ := newFixtureApp(t)
	mux := newMux(t, app)
	admin := map[string]string{"Authorization": superuserToken(t, app), "Content-Type": "application/json"}
	edit := func(body string) (int, string) {
		t.Helper()
		res, out := do(t, mux, http.MethodPatch, "/api/collections/deployments/records/"+idAliceSite, body, admin)
		return res.StatusCode, out
	}
	if code, out := edit(`{"takedown_reason":"` + strings.Repeat("x", sites.MaxTakedownReasonLen+1) + `"}`); code != 400 || !strings.Contains(out, "takedown_reason") {
		t.Fatalf("a long reason: %d %s", code, out)
	}
	if code, out := edit(`{"takedown_reason":"malware"}`); code != 200 {
		t.Fatalf("take down: %d %s", code, out)
	}
	d := takedownOf(t, app, idAliceSite)
	if d.TakedownReason() != "malware" || d.TakenDownAt().IsZero() || d.TakenDownBy() != "admin@example.com" {
		t.Fatalf("stored: %q %v %q", d.TakedownReason(), d.TakenDownAt(), d.TakenDownBy())
	}
	if code, body := siteGet(t, app, "alice-site.sites.test", "/"); code != 410 || !strings.Contains(body, "taken down for: malware") {
		t.Fatalf("site: %d %.100q", code, body)
	}
	if app.TestMailer.TotalSend() != 1 || app.TestMailer.LastMessage().Subject != "Your site alice-site was taken down" {
		t.Fatalf("mail: %d", app.TestMailer.TotalSend())
	}
	if code, out := edit(`{"paused":true}`); code != 403 || !strings.Contains(out, "taken down") {
		t.Fatalf("pause in the dashboard: %d %s", code, out)
	}
	if code, out := edit(`{"takedown_reason":""}`); code != 200 {
		t.Fatalf("restore: %d %s", code, out)
	}
	if code, _ := siteGet(t, app, "alice-site.sites.test", "/"); code != 200 {
		t.Fatalf("restored site: %d", code)
	}
}

// TestNewVersionOfTakenDownSite: a version saved from anywhere (here the
// records layer, as the dashboard saves) for a taken-down site is refused
// by the record hooks, and nothing is saved; the same version for a site
// that is up (and cached) is saved. The version's execute hooks read its
// deployment once (sites.DeploymentOfSave): the takedown check sees what
// the site cache's bracket read.
func TestNewVersionOfTakenDownSite(t *testing.T) {
	t.Parallel()
	app, sd := newFixtureApp(t)
	alice, err := sites.FindDeployment(app, idAliceSite)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sd.svc.TakeDown(context.Background(), alice.Record, "malware", "admin@example.com"); err != nil {
		t.Fatal(err)
	}
	col, err := app.FindCollectionByNameOrId(sites.VersionsCollection)
	if err != nil {
		t.Fatal(err)
	}
	version := func(dep string) *core.Record {
		v := core.NewRecord(col)
		v.Set(sites.FieldVersionDeployment, dep)
		v.Set(sites.FieldVersionNumber, 7)
		v.Set(sites.FieldVersionManifest, sites.Manifest{})
		v.Set(sites.FieldVersionStorageType, sites.StorageFiles)
		return v
	}
	before, err := app.CountRecords(sites.VersionsCollection)
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Save(version(idAliceSite)); !errors.Is(err, sites.ErrTakenDown) {
		t.Fatalf("a version of a taken-down site: %v, want ErrTakenDown", err)
	}
	if n, _ := app.CountRecords(sites.VersionsCollection); n != before {
		t.Fatalf("%d versions after the refusal, want %d", n, before)
	}
	if code, _ := siteGet(t, app, "bob-site.sites.test", "/"); code != 200 { // cached
		t.Fatalf("bob-site: %d", code)
	}
	if err := app.Save(version(idBobSite)); err != nil {
		t.Fatalf("a version of a site that is up: %v", err)
	}
	if n, _ := app.CountRecords(sites.VersionsCollection); n != before+1 {
		t.Fatalf("%d versions after the save, want %d", n, before+1)
	}
}
