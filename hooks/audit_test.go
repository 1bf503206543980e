package hooks

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/cron"

	"sitedrop/sites/audit"
)

// testClientIP is the address httptest gives every request.
const testClientIP = "192.0.2.1"

// auditEntries are the entries of action about target, oldest first.
func auditEntries(t testing.TB, app core.App, action, target string) []audit.Item {
	t.Helper()
	recs, err := app.FindRecordsByFilter(audit.Collection, "action = {:a} && target = {:t}", "created", 0, 0,
		dbx.Params{"a": action, "t": target})
	if err != nil {
		t.Fatal(err)
	}
	var out []audit.Item
	for _, r := range recs {
		out = append(out, audit.Item{
			ID: r.Id, Actor: r.GetString("actor"), ActorKind: r.GetString("actor_kind"), IP: r.GetString("ip"),
			Action: r.GetString("action"), Target: r.GetString("target"),
		})
	}
	return out
}

// onlyEntry is the one entry of action about target, which actor (of
// kind) wrote from ip, with owner.
func onlyEntry(t testing.TB, app core.App, action, target, kind, actor, ip, owner string) *core.Record {
	t.Helper()
	recs, err := app.FindRecordsByFilter(audit.Collection, "action = {:a} && target = {:t}", "", 0, 0,
		dbx.Params{"a": action, "t": target})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 {
		t.Fatalf("%d %s entries about %s, want 1", len(recs), action, target)
	}
	r := recs[0]
	if got := [4]string{r.GetString("actor_kind"), r.GetString("actor"), r.GetString("ip"), r.GetString("owner")}; got != [4]string{kind, actor, ip, owner} {
		t.Fatalf("%s entry: kind, actor, ip, owner = %q, want %q", action, got, [4]string{kind, actor, ip, owner})
	}
	return r
}

// Every owner action through the API and the pages is logged with who,
// from which address, and what: a deploy (keyed and anonymous), an update,
// a rename, a pause, a rollback, a key revoked in the account page.
func TestAuditOwnerActions(t *testing.T) {
	app, _ := newFixtureApp(t)
	mux := newMux(t, app)
	alice, err := app.FindAuthRecordByEmail("users", "alice@example.com")
	if err != nil {
		t.Fatal(err)
	}

	res, body := do(t, mux, http.MethodPost, "/deploy", `{"html":"<h1>one</h1>"}`, withHeaders(bearer(keyAlice), map[string]string{"Content-Type": "application/json"}))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("deploy: %d %s", res.StatusCode, body)
	}
	recs, err := app.FindRecordsByFilter("deployments", "owner = {:o}", "-created", 1, 0, dbx.Params{"o": alice.Id})
	if err != nil || len(recs) != 1 {
		t.Fatalf("new deployment: %v", err)
	}
	dep := recs[0]
	e := onlyEntry(t, app, audit.ActionDeploy, dep.Id, audit.KindUser, alice.Id, testClientIP, alice.Id)
	if e.GetString("target_kind") != audit.TargetDeployment || !strings.Contains(e.GetString("details"), `"slug":"`+dep.GetString("slug")+`"`) {
		t.Fatalf("deploy entry: %s %s", e.GetString("target_kind"), e.GetString("details"))
	}

	res, body = do(t, mux, http.MethodPut, "/deploy/"+dep.Id, `{"html":"<h1>two</h1>"}`, withHeaders(bearer(keyAlice), map[string]string{"Content-Type": "application/json"}))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("update: %d %s", res.StatusCode, body)
	}
	e = onlyEntry(t, app, audit.ActionUpdate, dep.Id, audit.KindUser, alice.Id, testClientIP, alice.Id)
	if !strings.Contains(e.GetString("details"), `"version":2`) {
		t.Fatalf("update details %s", e.GetString("details"))
	}
	// the new version going live is the update, not a promote
	if n := len(auditEntries(t, app, audit.ActionPromote, dep.Id)); n != 0 {
		t.Fatalf("%d promote entries for a plain update", n)
	}

	res, body = do(t, mux, http.MethodPost, "/deploy/"+dep.Id+"/rollback", `{"version":1}`, withHeaders(bearer(keyAlice), map[string]string{"Content-Type": "application/json"}))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("rollback: %d %s", res.StatusCode, body)
	}
	e = onlyEntry(t, app, audit.ActionRollback, dep.Id, audit.KindUser, alice.Id, testClientIP, alice.Id)
	if !strings.Contains(e.GetString("details"), `"from":2`) || !strings.Contains(e.GetString("details"), `"to":1`) {
		t.Fatalf("rollback details %s", e.GetString("details"))
	}

	res, body = do(t, mux, http.MethodPost, "/deploy/"+idAliceSite+"/rename", `{"slug":"alice-new"}`, withHeaders(bearer(keyAlice), map[string]string{"Content-Type": "application/json"}))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("rename: %d %s", res.StatusCode, body)
	}
	e = onlyEntry(t, app, audit.ActionRename, idAliceSite, audit.KindUser, alice.Id, testClientIP, alice.Id)
	if !strings.Contains(e.GetString("details"), `"from":"alice-site"`) || !strings.Contains(e.GetString("details"), `"to":"alice-new"`) {
		t.Fatalf("rename details %s", e.GetString("details"))
	}

	res, body = do(t, mux, http.MethodPost, "/deploy/"+idAliceSite+"/pause", ``, bearer(keyAlice))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("pause: %d %s", res.StatusCode, body)
	}
	onlyEntry(t, app, audit.ActionPause, idAliceSite, audit.KindUser, alice.Id, testClientIP, alice.Id)

	mustKeyWithID(t, app, alice, "oldlaptopkey000", "old laptop")
	res, body = do(t, mux, http.MethodPost, "/account/keys/oldlaptopkey000/revoke", "confirm=yes", withHeaders(sameOrigin, cookie(sessionAlice)))
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("revoke: %d %s", res.StatusCode, body)
	}
	e = onlyEntry(t, app, audit.ActionKeyRevoke, "oldlaptopkey000", audit.KindUser, alice.Id, testClientIP, alice.Id)
	if !strings.Contains(e.GetString("details"), `"name":"old laptop"`) {
		t.Fatalf("revoke details %s", e.GetString("details"))
	}

	// an anonymous deploy: no account, the client's address
	res, body = do(t, mux, http.MethodPost, "/deploy", `{"html":"<h1>anon</h1>"}`, map[string]string{"Content-Type": "application/json"})
	if res.StatusCode != http.StatusOK {
		t.Fatalf("anonymous deploy: %d %s", res.StatusCode, body)
	}
	recs, err = app.FindRecordsByFilter("deployments", "owner = ''", "-created", 1, 0)
	if err != nil || len(recs) != 1 {
		t.Fatalf("anonymous deployment: %v", err)
	}
	onlyEntry(t, app, audit.ActionDeploy, recs[0].Id, audit.KindAnonymous, audit.KindAnonymous, testClientIP, "")
}

// An edit in the admin dashboard is logged as the superuser's, from the
// address of the dashboard's request.
func TestAuditDashboardEdit(t *testing.T) {
	app, _ := newFixtureApp(t)
	mux := newMux(t, app)
	su := mustSuperuser(t, app, "admin@example.com", "a-long-password")
	token, err := su.NewAuthToken()
	if err != nil {
		t.Fatal(err)
	}
	res, body := do(t, mux, http.MethodPatch, "/api/collections/deployments/records/"+idBobSite, `{"slug":"bob-renamed"}`,
		map[string]string{"Authorization": token, "Content-Type": "application/json"})
	if res.StatusCode != http.StatusOK {
		t.Fatalf("dashboard rename: %d %s", res.StatusCode, body)
	}
	bob, _ := app.FindAuthRecordByEmail("users", "bob@example.com")
	onlyEntry(t, app, audit.ActionRename, idBobSite, audit.KindSuperuser, su.Id, testClientIP, bob.Id)
}

// The log is append-only: no writer updates or deletes an entry, the
// record API creates none, and only superusers read it.
func TestAuditAppendOnly(t *testing.T) {
	app, _ := newFixtureApp(t)
	if err := audit.Record(t.Context(), app, audit.Entry{Actor: audit.User("someone", "198.51.100.7"),
		Action: audit.ActionDeploy, Kind: audit.TargetDeployment, Target: "x", Owner: "someone"}); err != nil {
		t.Fatal(err)
	}
	recs, err := app.FindRecordsByFilter(audit.Collection, "target = 'x'", "", 0, 0)
	if err != nil || len(recs) != 1 {
		t.Fatalf("entry: %v", err)
	}
	entry := recs[0]
	entry.Set("action", "rename")
	if err := app.Save(entry); err == nil {
		t.Fatal("an entry was updated")
	}
	if err := app.Delete(entry); err == nil {
		t.Fatal("an entry was deleted")
	}
	if got, _ := app.FindRecordById(audit.Collection, entry.Id); got == nil || got.GetString("action") != audit.ActionDeploy {
		t.Fatal("the entry changed")
	}

	token := superuserToken(t, app)
	mux := newMux(t, app)
	su := map[string]string{"Authorization": token, "Content-Type": "application/json"}
	for _, c := range []struct{ method, url, body string }{
		{http.MethodPost, "/api/collections/audit_log/records", `{"actor":"a","actor_kind":"user","action":"deploy"}`},
		{http.MethodPatch, "/api/collections/audit_log/records/" + entry.Id, `{"action":"rename"}`},
		{http.MethodDelete, "/api/collections/audit_log/records/" + entry.Id, ``},
	} {
		if res, body := do(t, mux, c.method, c.url, c.body, su); res.StatusCode != http.StatusForbidden {
			t.Fatalf("superuser %s %s: %d %s", c.method, c.url, res.StatusCode, body)
		}
	}
	if n, _ := app.CountRecords(audit.Collection, dbx.HashExp{"target": "x"}); n != 1 {
		t.Fatalf("%d entries about x", n)
	}
	// superusers read it (the dashboard); an account does not
	if res, body := do(t, mux, http.MethodGet, "/api/collections/audit_log/records", ``, su); res.StatusCode != http.StatusOK {
		t.Fatalf("superuser list: %d %s", res.StatusCode, body)
	}
	if res, _ := do(t, mux, http.MethodGet, "/api/collections/audit_log/records", ``, bearer(keyAlice)); res.StatusCode == http.StatusOK {
		t.Fatal("an account listed the audit log")
	}
}

// The daily job drops the entries older than 90 days and keeps the others.
func TestAuditPurge(t *testing.T) {
	app, _ := newBareApp(t)
	for _, target := range []string{"old", "recent"} {
		if err := audit.Record(t.Context(), app, audit.Entry{Action: audit.ActionDeploy, Kind: audit.TargetDeployment, Target: target}); err != nil {
			t.Fatal(err)
		}
	}
	set := func(target string, age time.Duration) {
		t.Helper()
		_, err := app.NonconcurrentDB().NewQuery("UPDATE audit_log SET created = {:c} WHERE target = {:t}").
			Bind(dbx.Params{"c": time.Now().UTC().Add(-age).Format("2006-01-02 15:04:05.000Z"), "t": target}).Execute()
		if err != nil {
			t.Fatal(err)
		}
	}
	set("old", audit.Keep+time.Hour)
	set("recent", audit.Keep-time.Hour)
	i := slices.IndexFunc(app.Cron().Jobs(), func(j *cron.Job) bool { return j.Id() == jobAuditPurge })
	if i < 0 {
		t.Fatal("no audit purge job")
	}
	app.Cron().Jobs()[i].Run()
	for target, want := range map[string]int{"old": 0, "recent": 1} {
		if n, _ := app.CountRecords(audit.Collection, dbx.HashExp{"target": target}); int(n) != want {
			t.Fatalf("%d %s entries, want %d", n, target, want)
		}
	}
}

// The owner reads the entries about their own things on the account's
// activity page, newest first, a page at a time; no one else's.
func TestAuditActivityPage(t *testing.T) {
	app, _ := newFixtureApp(t)
	mux := newMux(t, app)
	alice, _ := app.FindAuthRecordByEmail("users", "alice@example.com")
	bob, _ := app.FindAuthRecordByEmail("users", "bob@example.com")

	res, body := do(t, mux, http.MethodPost, "/deploy/"+idAliceSite+"/rename", `{"slug":"alice-new"}`, withHeaders(bearer(keyAlice), map[string]string{"Content-Type": "application/json"}))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("rename: %d %s", res.StatusCode, body)
	}
	if err := audit.Record(t.Context(), app, audit.Entry{Actor: audit.User(bob.Id, "198.51.100.9"), Action: audit.ActionPause,
		Kind: audit.TargetDeployment, Target: idBobSite, Owner: bob.Id, Details: map[string]any{"slug": "bob-secret-site"}}); err != nil {
		t.Fatal(err)
	}
	res, body = do(t, mux, http.MethodGet, "/account/activity", ``, cookie(sessionAlice))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("activity: %d %s", res.StatusCode, body)
	}
	for _, want := range []string{`data-testid="activity-row"`, "Renamed alice-site to alice-new", "<td>You</td>", "<code>" + testClientIP + "</code>"} {
		if !strings.Contains(body, want) {
			t.Fatalf("activity page lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "bob-secret-site") || strings.Contains(body, `data-testid="activity-older"`) {
		t.Fatalf("activity page shows another account's entry or a next page:\n%s", body)
	}

	// paged: 50 a page, newest first
	for i := range 50 {
		if err := audit.Record(t.Context(), app, audit.Entry{Actor: audit.User(alice.Id, "192.0.2.1"), Action: audit.ActionPause,
			Kind: audit.TargetDeployment, Target: idAliceSite, Owner: alice.Id, Details: map[string]any{"slug": "page-" + strconv.Itoa(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	_, body = do(t, mux, http.MethodGet, "/account/activity", ``, cookie(sessionAlice))
	if n := strings.Count(body, `data-testid="activity-row"`); n != 50 || !strings.Contains(body, `href="/account/activity?page=2"`) {
		t.Fatalf("page 1: %d rows, next link %v", n, strings.Contains(body, "page=2"))
	}
	_, body = do(t, mux, http.MethodGet, "/account/activity?page=2", ``, cookie(sessionAlice))
	// the rename and the fixtures' entries, older than the 50 pauses
	if n := strings.Count(body, `data-testid="activity-row"`); n < 1 || strings.Contains(body, "page-") || !strings.Contains(body, "Renamed alice-site to alice-new") ||
		!strings.Contains(body, `href="/account/activity?page=1"`) {
		t.Fatalf("page 2: %d rows:\n%s", n, body)
	}
	if res, _ := do(t, mux, http.MethodGet, "/account/activity?page=x", ``, cookie(sessionAlice)); res.StatusCode != http.StatusBadRequest {
		t.Fatalf("a bad page: %d", res.StatusCode)
	}
	if res, _ := do(t, mux, http.MethodGet, "/account/activity", ``, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("signed out: %d", res.StatusCode)
	}
}

// A custom domain and a webhook added and removed, and a protection set
// by a deploy, are logged, the removals as the owner's from the address of
// their request.
func TestAuditDomainsWebhooksProtection(t *testing.T) {
	app, _ := newFixtureApp(t)
	mux := newMux(t, app)
	alice, _ := app.FindAuthRecordByEmail("users", "alice@example.com")

	d := mustDomain(t, app, idAliceSite, "www.alice.example", false)
	w := mustWebhook(t, app, idAliceSite, "https://hooks.example.com/alice?token=secret")
	// saved outside any request: sitedrop's, about alice's things
	onlyEntry(t, app, audit.ActionDomainAdd, d.Id, audit.KindSystem, audit.KindSystem, "", alice.Id)
	e := onlyEntry(t, app, audit.ActionWebhookCreate, w.Id, audit.KindSystem, audit.KindSystem, "", alice.Id)
	if details := e.GetString("details"); !strings.Contains(details, `"host":"hooks.example.com"`) || strings.Contains(details, "secret") {
		t.Fatalf("webhook details %s", details)
	}

	if res, body := do(t, mux, http.MethodDelete, "/deploy/"+idAliceSite+"/domains/www.alice.example", ``, bearer(keyAlice)); res.StatusCode >= 300 {
		t.Fatalf("domain delete: %d %s", res.StatusCode, body)
	}
	onlyEntry(t, app, audit.ActionDomainRemove, d.Id, audit.KindUser, alice.Id, testClientIP, alice.Id)
	if res, body := do(t, mux, http.MethodDelete, "/webhooks/"+idAliceSite+"/"+w.Id, ``, bearer(keyAlice)); res.StatusCode >= 300 {
		t.Fatalf("webhook delete: %d %s", res.StatusCode, body)
	}
	onlyEntry(t, app, audit.ActionWebhookDelete, w.Id, audit.KindUser, alice.Id, testClientIP, alice.Id)

	res, body := do(t, mux, http.MethodPut, "/deploy/"+idAliceSite, `{"html":"<p>secret</p>","password":"open sesame"}`,
		withHeaders(bearer(keyAlice), map[string]string{"Content-Type": "application/json"}))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("protecting deploy: %d %s", res.StatusCode, body)
	}
	e = onlyEntry(t, app, audit.ActionProtect, idAliceSite, audit.KindUser, alice.Id, testClientIP, alice.Id)
	if !strings.Contains(e.GetString("details"), `"password":true`) || strings.Contains(e.GetString("details"), "sesame") {
		t.Fatalf("protect details %s", e.GetString("details"))
	}
}
