package hooks

import (
	"net/http"
	"strings"
	"testing"

	"github.com/pocketbase/pocketbase/tests"

	"sitedrop/sites/accounts"
	"sitedrop/ui"
)

func TestAccountSessionsList(t *testing.T) {
	t.Parallel()
	runScenarios(t, []tests.ApiScenario{
		{
			Name:           "browsers listed apart from API keys, this one marked",
			Method:         http.MethodGet,
			URL:            "/account",
			Headers:        cookie(sessionAlice),
			ExpectedStatus: 200,
			ExpectedContent: []string{
				`data-testid="session-row"`, `data-testid="this-browser"`, "Signed-in browsers",
				"signed in with the API key <code>" + keyAlice[:11] + "…</code>", "signed in with an e-mail code",
				`data-testid="revoke-others"`, "just now",
			},
			NotExpectedContent: []string{"Web sign-in"}, // the code session's own key is no API key
			TestAppFactory:     aliceWithSecondBrowser,
		},
		{
			Name:               "one browser: no sign out everywhere else",
			Method:             http.MethodGet,
			URL:                "/account",
			Headers:            cookie(sessionAlice),
			ExpectedStatus:     200,
			ExpectedContent:    []string{`data-testid="this-browser"`, `href="/account/sessions/`},
			NotExpectedContent: []string{`data-testid="revoke-others"`},
			TestAppFactory:     newTestApp,
		},
	})
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
	if res, _ := do(t, mux, http.MethodGet, "/account/sessions/"+other.Id+"/revoke", "", withHeaders(cookie(sessionBob), map[string]string{"Accept": "text/html"})); res.StatusCode != 404 {
		t.Fatalf("bob's confirmation page of alice's session: %d", res.StatusCode)
	}
	if n := len(liveSessions(t, app, "alice@example.com")); n != 2 {
		t.Fatalf("bob ended a session of alice: %d left", n)
	}

	// another browser ends with one button, its own key with it
	expectRedirect(t, post("/account/sessions/"+other.Id+"/revoke", "", sessionAlice), "/account")
	expectFlash(t, app, sessionAlice, ui.FlashSuccess, "other browser is signed out")
	if _, err := app.FindRecordById(accounts.APIKeysCollection, other.GetString("api_key")); err == nil {
		t.Fatal("the ended session's own key still exists")
	}
	if n := len(liveSessions(t, app, "alice@example.com")); n != 1 {
		t.Fatalf("%d sessions left", n)
	}

	// this browser's own asks first: the button leads to a page
	expectRedirect(t, post("/account/sessions/"+mine.Id+"/revoke", "", sessionAlice), "/account/sessions/"+mine.Id+"/revoke")
	res, body := do(t, mux, http.MethodGet, "/account/sessions/"+mine.Id+"/revoke", "", cookie(sessionAlice))
	if res.StatusCode != 200 || !strings.Contains(body, "Sign out this browser?") || !strings.Contains(body, `name="confirm" value="yes"`) {
		t.Fatalf("confirmation page: %d\n%s", res.StatusCode, body)
	}
	if _, err := accounts.UserBySession(app, sessionAlice); err != nil {
		t.Fatal("signed out before confirming")
	}
	res = post("/account/sessions/"+mine.Id+"/revoke", "confirm=yes", sessionAlice)
	expectRedirect(t, res, "/auth/login")
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
