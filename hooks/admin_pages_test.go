package hooks

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tests"
	"github.com/pocketbase/pocketbase/tools/cron"

	"sitedrop/sites"
	"sitedrop/sites/abuse"
	"sitedrop/sites/accounts"
	"sitedrop/sites/audit"
)

// adminCookie is the moderation session cookie header (plain HTTP name).
func adminCookie(token string) map[string]string {
	return map[string]string{"Cookie": "sitedrop_admin=" + token}
}

// adminSignIn signs in to the moderation page as the fixture superuser
// (made here unless it exists) and returns the session cookie's value.
func adminSignIn(t testing.TB, app *tests.TestApp, mux http.Handler) string {
	t.Helper()
	if _, err := app.FindAuthRecordByEmail("_superusers", "admin@example.com"); err != nil {
		mustSuperuser(t, app, "admin@example.com", "a-long-password")
	}
	form := url.Values{"email": {"admin@example.com"}, "password": {"a-long-password"}}.Encode()
	res, out := do(t, mux, http.MethodPost, "/admin/login", form, adminForm)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/admin" {
		t.Fatalf("admin sign-in: %d %s %.200s", res.StatusCode, res.Header.Get("Location"), out)
	}
	for _, c := range res.Cookies() {
		if c.Name == "sitedrop_admin" {
			if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || c.MaxAge <= 0 {
				t.Fatalf("admin cookie %+v", c)
			}
			return c.Value
		}
	}
	t.Fatal("no admin cookie set")
	return ""
}

// adminForm are the headers of a form posted from the web host's own page.
var adminForm = map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Sec-Fetch-Site": "same-origin", "Accept": "text/html"}

// TestAdminLogin: the moderation page asks for a superuser's e-mail and
// password; a wrong one (or a user's session) does not open it, changing
// nothing; the right one sets a session cookie of its own (hashed in the
// database), which signs out.
func TestAdminLogin(t *testing.T) {
	t.Parallel()
	app, _ := newFixtureApp(t)
	mux := newMux(t, app)
	mustSuperuser(t, app, "admin@example.com", "a-long-password")
	expect := func(method, path, body string, h map[string]string, status int, want string) *http.Response {
		t.Helper()
		res, out := do(t, mux, method, path, body, h)
		if res.StatusCode != status || !strings.Contains(out+res.Header.Get("Location"), want) {
			t.Fatalf("%s %s: %d %s %.300s, want %d %q", method, path, res.StatusCode, res.Header.Get("Location"), out, status, want)
		}
		return res
	}
	expect(http.MethodGet, "/admin", "", nil, 303, "/admin/login")
	expect(http.MethodGet, "/admin", "", withHeaders(cookie(sessionAlice), map[string]string{"Accept": "text/html"}), 303, "/admin/login")
	expect(http.MethodGet, "/admin/login", "", map[string]string{"Accept": "text/html"}, 200, `name="password"`)
	for _, form := range []string{"email=admin%40example.com&password=wrong", "email=alice%40example.com&password=a-long-password", ""} {
		res := expect(http.MethodPost, "/admin/login", form, adminForm, 401, "Wrong e-mail address or password.")
		if len(res.Cookies()) != 0 {
			t.Fatalf("a refused sign-in set %v", res.Cookies())
		}
	}
	expect(http.MethodPost, "/admin/login", "email=admin%40example.com&password=a-long-password",
		withHeaders(adminForm, map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "http://evil.example"}), 403, "own pages")
	if n, _ := app.CountRecords(accounts.AdminSessionsCollection); n != 0 {
		t.Fatalf("%d admin sessions after refusals", n)
	}

	tok := adminSignIn(t, app, mux)
	if _, err := app.FindFirstRecordByData(accounts.AdminSessionsCollection, accounts.FieldTokenHash, accounts.HashSecret(tok)); err != nil {
		t.Fatalf("the session is not stored by its hash: %v", err)
	}
	expect(http.MethodGet, "/admin", "", withHeaders(adminCookie(tok), map[string]string{"Accept": "text/html"}), 200, "Reports")
	expect(http.MethodGet, "/admin/login", "", adminCookie(tok), 303, "/admin")
	expect(http.MethodPost, "/admin/logout", "", withHeaders(adminForm, adminCookie(tok)), 303, "/admin/login?signed-out=1")
	expect(http.MethodGet, "/admin", "", adminCookie(tok), 303, "/admin/login")

	// an expired session opens nothing
	tok = adminSignIn(t, app, mux)
	rec, _ := app.FindFirstRecordByData(accounts.AdminSessionsCollection, accounts.FieldTokenHash, accounts.HashSecret(tok))
	rec.Set(accounts.FieldExpiresAt, time.Now().Add(-time.Second).UTC())
	if err := app.Save(rec); err != nil {
		t.Fatal(err)
	}
	expect(http.MethodGet, "/admin", "", adminCookie(tok), 303, "/admin/login")
}

// TestAdminLoginRateLimit: the moderation sign-in counts against the
// sign-in codes' per-client limit (10 a minute): the 11th attempt is
// refused 429 without its password being checked.
func TestAdminLoginRateLimit(t *testing.T) {
	t.Parallel()
	app, _ := newFixtureApp(t)
	mux := newMux(t, app)
	mustSuperuser(t, app, "admin@example.com", "a-long-password")
	for i := range 10 {
		if res, _ := do(t, mux, http.MethodPost, "/admin/login", "email=admin%40example.com&password=wrong", adminForm); res.StatusCode != 401 {
			t.Fatalf("attempt %d: %d", i+1, res.StatusCode)
		}
	}
	res, out := do(t, mux, http.MethodPost, "/admin/login", "email=admin%40example.com&password=a-long-password", adminForm)
	if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" || len(res.Cookies()) != 0 {
		t.Fatalf("11th attempt: %d %q %v %.200s", res.StatusCode, res.Header.Get("Retry-After"), res.Cookies(), out)
	}
}

// TestAdminModeration: from the moderation page a superuser sees a report
// with its site, owner and versions, takes the site down (the report is
// actioned, the site answers 410), restores it, blocks its content, bans
// its owner, edits the blocklist and the anonymous deploys' settings;
// every form answers 303 back to its part of the page, whose message
// shows there once.
func TestAdminModeration(t *testing.T) {
	t.Parallel()
	app, sd := newFixtureApp(t)
	mux := newMux(t, app)
	tok := adminSignIn(t, app, mux)
	rep, err := sd.reports.Open(abuse.NewReport{URL: "https://alice-site.sites.test/login", Reason: "phishing", Details: "a fake bank", IP: "192.0.2.9"})
	if err != nil {
		t.Fatal(err)
	}
	alice, _ := accounts.FindUserByEmail(app, "alice@example.com")
	page := func(query string) string {
		t.Helper()
		res, out := do(t, mux, http.MethodGet, "/admin"+query, "", withHeaders(adminCookie(tok), map[string]string{"Accept": "text/html"}))
		if res.StatusCode != 200 {
			t.Fatalf("GET /admin%s: %d %.300s", query, res.StatusCode, out)
		}
		return out
	}
	post := func(path string, form url.Values, wantLoc string) {
		t.Helper()
		res, out := do(t, mux, http.MethodPost, path, form.Encode(), withHeaders(adminForm, adminCookie(tok)))
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != wantLoc {
			t.Fatalf("POST %s: %d %q %.300s, want 303 %q", path, res.StatusCode, res.Header.Get("Location"), out, wantLoc)
		}
	}
	contains := func(out string, wants ...string) {
		t.Helper()
		for _, w := range wants {
			if !strings.Contains(out, w) {
				t.Fatalf("the page lacks %q:\n%.3000s", w, out)
			}
		}
	}
	panel := "report-" + rep.Id
	contains(page(""), "(1 open)", "phishing", "a fake bank", "alice@example.com", `id="`+panel+`"`, "v1,", "(live)",
		`href="http://alice-site.sites.test`)

	// take down, from the report: the report is actioned
	back := url.Values{"back": {panel}, "report": {rep.Id}}
	post("/admin/sites/"+idAliceSite+"/takedown", url.Values{"back": {panel}, "report": {rep.Id}, "reason": {""}}, "/admin#"+panel)
	contains(page(""), "alice-site was not taken down: a takedown needs a reason")
	post("/admin/sites/"+idAliceSite+"/takedown", url.Values{"back": {panel}, "report": {rep.Id}, "reason": {"Phishing"}}, "/admin#"+panel)
	if code, body := siteGet(t, app, "alice-site.sites.test", "/"); code != http.StatusGone || !strings.Contains(body, "taken down for: Phishing") {
		t.Fatalf("site after the takedown: %d %.100q", code, body)
	}
	if r, _ := sd.reports.Find(rep.Id); r.Status() != abuse.StatusActioned {
		t.Fatalf("report status %q after the takedown", r.Status())
	}
	if got := auditEntries(t, app, audit.ActionTakedown, idAliceSite); len(got) != 1 || got[0].ActorKind != audit.KindSuperuser || got[0].IP != testClientIP {
		t.Fatalf("audit entries of the page's takedown: %+v, want one by the superuser", got)
	}
	out := page("")
	contains(out, "(0 open)", "alice-site is taken down.", "Taken down for: Phishing")
	if strings.Contains(page(""), "alice-site is taken down.") {
		t.Fatal("a message shown twice")
	}

	post("/admin/sites/"+idAliceSite+"/restore", back, "/admin#"+panel)
	if code, _ := siteGet(t, app, "alice-site.sites.test", "/"); code != 200 {
		t.Fatalf("site after the restore: %d", code)
	}

	// the lookup: by URL
	contains(page("?site="+url.QueryEscape("http://alice-site.sites.test/x")), `data-testid="admin-site"`, "alice-site")
	contains(page("?site=nosuchsite"), "No site is at nosuchsite.")

	// block the content, from the lookup
	post("/admin/sites/"+idAliceSite+"/block", url.Values{"back": {"lookup"}}, "/admin?site=alice-site#lookup")
	contains(page("?site=alice-site"), "1 page of alice-site blocked.", "content_hash")

	// ban the owner
	post("/admin/accounts/"+alice.Id+"/ban", url.Values{"back": {panel}, "reason": {"fraud"}}, "/admin#"+panel)
	if u, _ := app.FindRecordById(accounts.UsersCollection, alice.Id); !accounts.UserOf(u).Banned() {
		t.Fatal("the owner is not banned")
	}
	contains(page(""), "alice@example.com is banned", "banned: fraud")
	if got := auditEntries(t, app, audit.ActionBan, alice.Id); len(got) != 1 || got[0].ActorKind != audit.KindSuperuser {
		t.Fatalf("audit entries of the page's ban: %+v", got)
	}
	post("/admin/accounts/"+alice.Id+"/unban", url.Values{"back": {panel}}, "/admin#"+panel)

	// the blocklist
	post("/admin/blocks", url.Values{"kind": {sites.BlockEmailDomain}, "value": {"spam.example"}, "note": {"kits"}}, "/admin#blocklist")
	contains(page(""), "spam.example is blocked.")
	post("/admin/blocks", url.Values{"kind": {"nonsense"}, "value": {"x"}}, "/admin#blocklist")
	contains(page(""), "Not blocked: ")
	blocks, _ := sd.blocks.List(sites.BlockEmailDomain)
	if len(blocks) != 1 {
		t.Fatalf("%d e-mail domain blocks", len(blocks))
	}
	post("/admin/blocks/"+blocks[0].Id+"/remove", nil, "/admin#blocklist")
	contains(page(""), "spam.example is no longer blocked.")

	// the anonymous deploys' settings, live
	post("/admin/anon", url.Values{"deploys": {"off"}, "ttl": {"2h"}}, "/admin#anon")
	contains(page(""), "Anonymous deploys&#39; settings saved.", "deploys off")
	if sd.settings.Anon().Enabled {
		t.Fatal("anonymous deploys still on")
	}
	post("/admin/anon", url.Values{"ttl": {"forever"}}, "/admin#anon")
	contains(page(""), "Not saved: ")

	// dismiss; delete
	rep2, _ := sd.reports.Open(abuse.NewReport{URL: "http://bob-site.sites.test/", Reason: "spam", IP: "192.0.2.9"})
	post("/admin/reports/"+rep2.Id+"/dismiss", nil, "/admin#report-"+rep2.Id)
	if r, _ := sd.reports.Find(rep2.Id); r.Status() != abuse.StatusDismissed {
		t.Fatalf("report status %q after dismiss", r.Status())
	}
	// the delete asks first: the site's button is a link to the question,
	// a post without confirm=yes goes there, Cancel goes back
	del := "/admin/sites/" + idBobSite + "/delete"
	contains(page(""), `href="`+del+"?back=report-"+rep2.Id+`"`)
	post(del, url.Values{"back": {"report-" + rep2.Id}}, del+"?back=report-"+rep2.Id)
	if _, err := sites.FindDeployment(app, idBobSite); err != nil {
		t.Fatal("bob-site deleted without the confirmation")
	}
	contains(page("/sites/"+idBobSite+"/delete?back=report-"+rep2.Id), "Delete the site bob-site?", `name="confirm" value="yes"`,
		`name="back" value="report-`+rep2.Id+`"`, `href="/admin#report-`+rep2.Id+`"`)
	contains(page("/sites/"+idBobSite+"/delete?back=lookup"), `href="/admin?site=bob-site#lookup"`)
	post(del, url.Values{"back": {"report-" + rep2.Id}, "confirm": {"yes"}}, "/admin#report-"+rep2.Id)
	if _, err := sites.FindDeployment(app, idBobSite); err == nil {
		t.Fatal("bob-site not deleted")
	}
	contains(page(""), "bob-site is deleted.")
}

// TestAdminSessionExpiry: the minute's expiry job (jobExpire) drops the
// moderation page's sessions past their expiry and keeps the live ones,
// without anyone signing in.
func TestAdminSessionExpiry(t *testing.T) {
	app, _ := newBareApp(t)
	su := mustSuperuser(t, app, "admin@example.com", "a-long-password")
	col, err := app.FindCollectionByNameOrId(accounts.AdminSessionsCollection)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for name, expires := range map[string]time.Time{"expired": time.Now().Add(-time.Minute), "live": time.Now().Add(time.Hour)} {
		rec := core.NewRecord(col)
		rec.Set("superuser", su.Id)
		rec.Set(accounts.FieldTokenHash, accounts.HashSecret("token-of-the-"+name+"-session"))
		rec.Set(accounts.FieldExpiresAt, expires.UTC())
		if err := app.Save(rec); err != nil {
			t.Fatal(err)
		}
		ids[name] = rec.Id
	}
	i := slices.IndexFunc(app.Cron().Jobs(), func(j *cron.Job) bool { return j.Id() == jobExpire })
	if i < 0 {
		t.Fatal("no expiry job")
	}
	app.Cron().Jobs()[i].Run()
	if _, err := app.FindRecordById(accounts.AdminSessionsCollection, ids["expired"]); err == nil {
		t.Error("the expired admin session is kept")
	}
	if _, err := app.FindRecordById(accounts.AdminSessionsCollection, ids["live"]); err != nil {
		t.Errorf("the live admin session is gone: %v", err)
	}
}
