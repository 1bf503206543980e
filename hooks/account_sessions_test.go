package hooks

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/pocketbase/pocketbase/tests"

	"sitedrop/sites/accounts"
	"sitedrop/sites/client"
	"sitedrop/ui"
)

func TestAccountSessionsList(t *testing.T) {
	t.Parallel()
	runScenarios(t, []tests.ApiScenario{
		{
			Name:           "browsers listed apart from API keys, named, this one first, one sign-out control each",
			Method:         http.MethodGet,
			URL:            "/account",
			Headers:        cookie(sessionAlice),
			ExpectedStatus: 200,
			ExpectedContent: []string{
				`data-testid="session-row"`, `data-testid="this-browser"`, "Signed-in browsers",
				"signed in with the API key <code>" + keyAlice[:11] + "…</code>", "signed in with an e-mail code",
				`data-testid="revoke-others"`, "just now",
				`<strong data-testid="session-client">Firefox on macOS</strong>`,
				`aria-label="Sign out Firefox on macOS, signed in just now"`,
			},
			NotExpectedContent: []string{"Web sign-in"}, // the code session's own key is no API key
			TestAppFactory:     aliceWithSecondBrowser,
		},
		{
			Name:               "one browser: its row signs it out, no sign out everywhere else",
			Method:             http.MethodGet,
			URL:                "/account",
			Headers:            cookie(sessionAlice),
			ExpectedStatus:     200,
			ExpectedContent:    []string{`data-testid="this-browser"`, `action="/auth/logout"`, `data-testid="sign-out"`},
			NotExpectedContent: []string{`data-testid="revoke-others"`, `href="/account/sessions/`},
			TestAppFactory:     newTestApp,
		},
	})
}

// TestAccountSessionsOrder: this browser's row comes first, though the
// other signed in later, and every row has one sign-out control.
func TestAccountSessionsOrder(t *testing.T) {
	t.Parallel()
	app := aliceWithSecondBrowser(t)
	defer app.Cleanup()
	_, body := do(t, newMux(t, app), http.MethodGet, "/account", "", cookie(sessionAlice))
	rows := strings.Split(body, `data-testid="session-row"`)[1:]
	if len(rows) != 2 {
		t.Fatalf("%d session rows", len(rows))
	}
	// alice's fixture session: made first, with no User-Agent
	if !strings.Contains(rows[0], `data-testid="this-browser"`) || !strings.Contains(rows[0], "Unknown browser") {
		t.Fatalf("first row is not this browser:\n%s", rows[0])
	}
	for i, r := range rows {
		r, _, _ = strings.Cut(r, "</li>")
		if n := strings.Count(r, "<form") + strings.Count(r, "<a "); n != 1 {
			t.Errorf("row %d has %d controls, want 1:\n%s", i, n, r)
		}
	}
	if n := strings.Count(body, `action="/auth/logout"`); n != 1 {
		t.Errorf("%d sign-out controls for this browser", n)
	}
}

// TestSessionKeepsUserAgent: a session keeps the User-Agent it started
// with (cut to its cap), and the account page names the browser from it.
func TestSessionKeepsUserAgent(t *testing.T) {
	t.Parallel()
	app, _ := newFixtureApp(t)
	defer app.Cleanup()
	mux := newMux(t, app)
	const ua = "Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
	res, _ := do(t, mux, http.MethodPost, "/auth/session", "", withHeaders(bearer(keyBob), sameOrigin, map[string]string{"User-Agent": ua + strings.Repeat(" x", 1000)}))
	if res.StatusCode != 200 {
		t.Fatalf("session: %d", res.StatusCode)
	}
	var token string
	for _, c := range res.Cookies() {
		if c.Name == "sitedrop_session" {
			token = c.Value
		}
	}
	rec, err := app.FindFirstRecordByData(accounts.SessionsCollection, "token_hash", accounts.HashSecret(token))
	if err != nil {
		t.Fatal(err)
	}
	if got := accounts.SessionOf(rec).UserAgent(); len(got) != accounts.MaxUserAgentLen || !strings.HasPrefix(got, ua) {
		t.Fatalf("kept %d bytes: %.120q", len(got), got)
	}
	_, body := do(t, mux, http.MethodGet, "/account", "", cookie(token))
	if !strings.Contains(body, `<strong data-testid="session-client">Chrome on ChromeOS</strong>`) {
		t.Fatalf("account page does not name the browser:\n%s", body)
	}
}

func TestAccountSessionRevoke(t *testing.T) {
	t.Parallel()
	app := aliceWithSecondBrowser(t)
	defer app.Cleanup()
	mux := newMux(t, app)
	ss := liveSessions(t, app, "alice@example.com")
	if len(ss) != 2 {
		t.Fatalf("%d sessions", len(ss))
	}
	var mine, other = ss[0], ss[1]
	if !accounts.IsSessionOf(mine, sessionAlice) {
		mine, other = other, mine
	}
	post := func(path string, body string, token string) *http.Response {
		t.Helper()
		res, _ := do(t, mux, http.MethodPost, path, body, withHeaders(sameOrigin, cookie(token)))
		return res
	}

	// bob cannot end alice's sessions
	expectRedirect(t, post("/account/sessions/"+other.Id+"/revoke", "", sessionBob), "/account")
	expectFlash(t, app, sessionBob, ui.FlashError, "already ended")
	if n := len(liveSessions(t, app, "alice@example.com")); n != 2 {
		t.Fatalf("bob ended a session of alice: %d left", n)
	}

	// another browser ends with one button, its own key with it
	expectRedirect(t, post("/account/sessions/"+other.Id+"/revoke", "", sessionAlice), "/account")
	expectFlash(t, app, sessionAlice, ui.FlashSuccess, "Signed out Firefox on macOS: that browser has to sign in again.")
	if _, err := app.FindRecordById(accounts.APIKeysCollection, other.GetString("api_key")); err == nil {
		t.Fatal("the ended session's own key still exists")
	}
	if n := len(liveSessions(t, app, "alice@example.com")); n != 1 {
		t.Fatalf("%d sessions left", n)
	}

	// this browser's own, posted here, signs it out as /auth/logout does
	res := post("/account/sessions/"+mine.Id+"/revoke", "", sessionAlice)
	expectRedirect(t, res, "/auth/login?signed_out=1")
	if c := res.Header.Get("Set-Cookie"); !strings.Contains(c, "sitedrop_session=;") {
		t.Fatalf("cookie not cleared: %q", c)
	}
	if _, err := accounts.UserBySession(app, sessionAlice); err == nil {
		t.Fatal("still signed in")
	}
	if _, err := accounts.UserByAPIKey(app, keyAlice); err != nil {
		t.Fatal("the API key the session stood on was revoked")
	}
}

func TestAccountSessionRevokeOthers(t *testing.T) {
	t.Parallel()
	app := aliceWithSecondBrowser(t)
	defer app.Cleanup()
	alice, _ := app.FindAuthRecordByEmail("users", "alice@example.com")
	mustCodeSession(t, app, alice)
	mux := newMux(t, app)
	res, _ := do(t, mux, http.MethodPost, "/account/sessions/revoke-others", "", withHeaders(sameOrigin, cookie(sessionAlice)))
	expectRedirect(t, res, "/account")
	expectFlash(t, app, sessionAlice, ui.FlashSuccess, "Signed out 2 other browsers.")
	ss := liveSessions(t, app, "alice@example.com")
	if len(ss) != 1 || !accounts.IsSessionOf(ss[0], sessionAlice) {
		t.Fatalf("%d sessions left", len(ss))
	}
	// from another origin: refused, nothing ends
	mustCodeSession(t, app, alice)
	res, _ = do(t, mux, http.MethodPost, "/account/sessions/revoke-others", "", withHeaders(cookie(sessionAlice), map[string]string{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site", "Content-Type": "application/x-www-form-urlencoded"}))
	if res.StatusCode != 403 || len(liveSessions(t, app, "alice@example.com")) != 2 {
		t.Fatalf("cross-origin: %d", res.StatusCode)
	}
}

// TestCLISessionNamed: the CLI's sign-in starts a session (it stands for the
// key the CLI keeps), which the sessions list names "sitedrop CLI", so no
// one signs it out by mistake for an unknown browser.
func TestCLISessionNamed(t *testing.T) {
	t.Parallel()
	app, _ := newFixtureApp(t)
	defer app.Cleanup()
	srv := httptest.NewServer(newMux(t, app))
	defer srv.Close()
	api := client.New(srv.URL, "")
	otp, err := api.RequestCode("bob@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := api.Verify(otp, codeFromMail(t, app)); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, rec := range liveSessions(t, app, "bob@example.com") {
		names = append(names, accounts.SessionOf(rec).Client().String())
	}
	if !slices.Contains(names, "sitedrop CLI") {
		t.Fatalf("sessions %q, want one of the sitedrop CLI", names)
	}
}
