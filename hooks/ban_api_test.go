package hooks

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"sitedrop/sites"
	"sitedrop/sites/accounts"
	"sitedrop/sites/audit"
)

// TestBanAPI: only a superuser bans an account, with a bounded reason;
// the banned account's API keys, browser session and sign-in codes are
// refused at once with a clear 403 (the session reads as signed out),
// its sites are taken down with the ban's reason (a site already taken
// down for another reason keeps it), and the log says who; the unban
// serves again only what the ban took down and lets the account in.
func TestBanAPI(t *testing.T) {
	t.Parallel()
	app, sd := newFixtureApp(t)
	mux := newMux(t, app)
	token := superuserToken(t, app)
	admin := map[string]string{"Authorization": token, "Content-Type": "application/json"}
	aliceKey := map[string]string{"Authorization": "Bearer " + keyAlice, "Content-Type": "application/json"}
	aliceSession := withHeaders(cookie(sessionAlice), map[string]string{"Sec-Fetch-Site": "same-origin"})
	alice, err := accounts.FindUserByEmail(app, "alice@example.com")
	if err != nil {
		t.Fatal(err)
	}
	const idAliceTwo = "alicesite000002"
	mustDeploy(t, sd, alice, idAliceTwo, "alice-two", "<h1>two</h1>", "Two")
	ban, unban := "/admin/users/"+alice.Id+"/ban", "/admin/users/"+alice.Id+"/unban"
	expect := func(method, url, body string, h map[string]string, status int, want string) string {
		t.Helper()
		res, out := do(t, mux, method, url, body, h)
		if res.StatusCode != status || !strings.Contains(out, want) {
			t.Fatalf("%s %s: %d %.300s, want %d %q", method, url, res.StatusCode, out, status, want)
		}
		return out
	}
	banOf := func() *accounts.User {
		t.Helper()
		rec, err := app.FindRecordById(accounts.UsersCollection, alice.Id)
		if err != nil {
			t.Fatal(err)
		}
		return accounts.UserOf(rec)
	}
	served := func(host, want string, code int) {
		t.Helper()
		if got, body := siteGet(t, app, host, "/"); got != code || !strings.Contains(body, want) {
			t.Fatalf("%s: %d %.200q, want %d %q", host, got, body, code, want)
		}
	}

	// refusals change nothing
	expect(http.MethodPost, ban, `{"reason":"fraud"}`, nil, 401, `"error":`)
	expect(http.MethodPost, ban, `{"reason":"fraud"}`, aliceKey, 401, `"error":`)
	expect(http.MethodPost, ban, `{}`, admin, 400, `{"error":"reason is required"}`)
	expect(http.MethodPost, ban, `{"reason":"   "}`, admin, 400, `{"error":"a ban needs a reason"}`)
	expect(http.MethodPost, ban, `{"reason":"`+strings.Repeat("x", sites.MaxTakedownReasonLen+1)+`"}`, admin, 400, "at most 500")
	expect(http.MethodPost, "/admin/users/nosuchuser0001/ban", `{"reason":"fraud"}`, admin, 404, `{"error":"User not found"}`)
	expect(http.MethodGet, ban, "", admin, 405, `{"error":"Method not allowed"}`)
	if banOf().Banned() {
		t.Fatal("banned by a refused request")
	}

	// a site taken down on its own before the ban
	expect(http.MethodPost, "/admin/deploy/"+idAliceTwo+"/takedown", `{"reason":"spam"}`, admin, 200, `"taken_down":true`)

	out := expect(http.MethodPost, ban, `{"reason":"  fraud  "}`, admin, 200, `"banned":true`)
	for _, want := range []string{`"id":"` + alice.Id + `"`, `"reason":"fraud"`, `"banned_by":"admin@example.com"`, `"banned_at":"`} {
		if !strings.Contains(out, want) {
			t.Errorf("ban answer %s lacks %s", out, want)
		}
	}
	if u := banOf(); u.BannedReason() != "fraud" || u.BannedAt().IsZero() || u.BannedBy() != "admin@example.com" {
		t.Fatalf("stored ban: %q %v %q", u.BannedReason(), u.BannedAt(), u.BannedBy())
	}
	served("alice-site.sites.test", "This site was taken down for: fraud", http.StatusGone)
	served("alice-two.sites.test", "This site was taken down for: spam", http.StatusGone)
	served("bob-site.sites.test", "<h1>bob</h1>", http.StatusOK)

	// keys, sessions and sign-in refused at once
	banned := `{"error":"This account is banned: fraud"}`
	expect(http.MethodGet, "/deploy/"+idAliceSite, "", aliceKey, 403, banned)
	expect(http.MethodPost, "/auth/session", "", aliceKey, 403, banned)
	expect(http.MethodGet, "/deploy/"+idAliceSite, "", aliceSession, 401, `"error":`)
	keysBefore, _ := accounts.ListAPIKeys(app, alice)
	otp := expect(http.MethodPost, "/auth/otp", `{"email":"alice@example.com"}`, map[string]string{"Content-Type": "application/json", "Sec-Fetch-Site": "same-origin"}, 200, `"otp_id":"`)
	var sent struct {
		ID string `json:"otp_id"`
	}
	if err := json.Unmarshal([]byte(otp), &sent); err != nil {
		t.Fatal(err)
	}
	expect(http.MethodPost, "/auth/verify", `{"otp_id":"`+sent.ID+`","code":"`+codeFromMail(t, app)+`"}`,
		map[string]string{"Content-Type": "application/json", "Sec-Fetch-Site": "same-origin"}, 403, banned)
	if keys, _ := accounts.ListAPIKeys(app, alice); len(keys) != len(keysBefore) {
		t.Fatalf("a banned sign-in made a key: %d keys, had %d", len(keys), len(keysBefore))
	}
	if got := auditEntries(t, app, audit.ActionBan, alice.Id); len(got) != 1 || got[0].ActorKind != audit.KindSuperuser || got[0].IP != testClientIP {
		t.Errorf("audit entries of the ban: %+v", got)
	}

	// unban: what the ban took down is served again, the rest is not
	expect(http.MethodPost, unban, "", admin, 200, `"banned":false`)
	expect(http.MethodPost, unban, "", admin, 200, `"banned":false`) // again: nothing changes
	if u := banOf(); u.Banned() || !u.BannedAt().IsZero() || u.BannedBy() != "" {
		t.Fatalf("unbanned, still: %q %v %q", u.BannedReason(), u.BannedAt(), u.BannedBy())
	}
	served("alice-site.sites.test", "<h1>alice</h1>", http.StatusOK)
	served("alice-two.sites.test", "This site was taken down for: spam", http.StatusGone)
	expect(http.MethodGet, "/deploy/"+idAliceSite, "", aliceKey, 200, `"slug":"alice-site"`)
	expect(http.MethodGet, "/deploy/"+idAliceSite, "", aliceSession, 200, `"slug":"alice-site"`)
	if got := auditEntries(t, app, audit.ActionUnban, alice.Id); len(got) != 1 || got[0].ActorKind != audit.KindSuperuser {
		t.Errorf("audit entries of the unban: %+v", got)
	}
}

// TestBanFromDashboard: a superuser who types a reason into the user's
// banned_reason in PocketBase's dashboard bans the account as the API
// does (its sites down, recorded as theirs), and emptying it unbans.
func TestBanFromDashboard(t *testing.T) {
	t.Parallel()
	app, _ := newFixtureApp(t)
	mux := newMux(t, app)
	admin := map[string]string{"Authorization": superuserToken(t, app), "Content-Type": "application/json"}
	alice, err := accounts.FindUserByEmail(app, "alice@example.com")
	if err != nil {
		t.Fatal(err)
	}
	edit := func(body string) (int, string) {
		t.Helper()
		res, out := do(t, mux, http.MethodPatch, "/api/collections/users/records/"+alice.Id, body, admin)
		return res.StatusCode, out
	}
	if code, out := edit(`{"banned_reason":"a\u0007b"}`); code != 400 || !strings.Contains(out, "banned_reason") {
		t.Fatalf("a reason with a control character: %d %s", code, out)
	}
	if code, out := edit(`{"banned_reason":"stolen cards"}`); code != 200 {
		t.Fatalf("ban: %d %s", code, out)
	}
	rec, _ := app.FindRecordById(accounts.UsersCollection, alice.Id)
	if u := accounts.UserOf(rec); u.BannedBy() != "admin@example.com" || u.BannedAt().IsZero() {
		t.Fatalf("stored: %q %v", u.BannedBy(), u.BannedAt())
	}
	if code, body := siteGet(t, app, "alice-site.sites.test", "/"); code != 410 || !strings.Contains(body, "taken down for: stolen cards") {
		t.Fatalf("site: %d %.100q", code, body)
	}
	if code, out := edit(`{"banned_reason":""}`); code != 200 {
		t.Fatalf("unban: %d %s", code, out)
	}
	if code, body := siteGet(t, app, "alice-site.sites.test", "/"); code != 200 || !strings.Contains(body, "<h1>alice</h1>") {
		t.Fatalf("site after the unban: %d %.100q", code, body)
	}
}

// TestBanMailsOneSummary: a ban mails its account one summary listing
// the sites it took down (a site already down for its own reason is not
// in it), not a takedown notice per site; lifting it mails one list of
// the sites restored. Over real SMTP, to the in-process receiver.
func TestBanMailsOneSummary(t *testing.T) {
	t.Parallel()
	rcv := newSMTPReceiver(t)
	app, sd := newFixtureApp(t)
	useRealSMTP(t, app, rcv)
	alice, err := accounts.FindUserByEmail(app, "alice@example.com")
	if err != nil {
		t.Fatal(err)
	}
	two := mustDeploy(t, sd, alice, "alicesite000002", "alice-two", "<h1>two</h1>", "Two")
	spam := mustDeploy(t, sd, alice, "alicesite000003", "alice-spam", "<h1>spam</h1>", "Spam")
	if _, err := sd.svc.TakeDown(t.Context(), spam, "spam", "admin@example.com"); err != nil {
		t.Fatal(err)
	}
	if m := parseMail(t, rcv.waitMailTo(t, "alice@example.com", mailWait).Data); m.Subject != "Your site alice-spam was taken down" {
		t.Fatalf("a takedown of its own mails its own notice: %q", m.Subject)
	}
	// mailOf is the one mail to alice after the first seen mails
	mailOf := func(seen int) parsedMail {
		t.Helper()
		mails := rcv.Mails() // sent before the ban's save returned
		if len(mails) != seen+1 {
			var subjects []string
			for _, m := range mails[seen:] {
				subjects = append(subjects, parseMail(t, m.Data).Subject)
			}
			t.Fatalf("%d mails, want one: %q", len(mails)-seen, subjects)
		}
		if mails[seen].To[0] != "alice@example.com" {
			t.Fatalf("mailed to %v", mails[seen].To)
		}
		return parseMail(t, mails[seen].Data)
	}

	if _, err := sd.svc.Ban(t.Context(), alice, "fraud", "admin@example.com"); err != nil {
		t.Fatal(err)
	}
	m := mailOf(1)
	if m.Subject != "Your account was banned" {
		t.Fatalf("the ban's mail: %q", m.Subject)
	}
	for _, part := range []string{m.Text, m.HTML} {
		for _, want := range []string{"banned your account for: fraud", "2 sites below are taken down", "alice-site", "http://alice-two.sites.test/"} {
			if !strings.Contains(part, want) {
				t.Errorf("the ban's mail lacks %q:\n%s", want, part)
			}
		}
		if strings.Contains(part, "alice-spam") {
			t.Errorf("the ban's mail lists a site it did not take down:\n%s", part)
		}
	}
	if got, _ := siteGet(t, app, two.GetString("slug")+".sites.test", "/"); got != 410 {
		t.Fatalf("alice-two after the ban: %d", got)
	}

	if _, err := sd.svc.Unban(t.Context(), alice); err != nil {
		t.Fatal(err)
	}
	m = mailOf(2)
	if m.Subject != "The ban of your account was lifted" || !strings.Contains(m.Text, "2 sites below are served again") ||
		!strings.Contains(m.Text, "alice-two") || strings.Contains(m.Text, "alice-spam") {
		t.Fatalf("the unban's mail: %q\n%s", m.Subject, m.Text)
	}
}
