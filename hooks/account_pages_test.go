package hooks

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tests"

	"sitedrop/sites/accounts"
	"sitedrop/ui"
)

// flashesOf takes the flash messages queued for the browser session of
// token, as its next page would.
func flashesOf(t testing.TB, app *tests.TestApp, token string) []ui.Flash {
	t.Helper()
	var out []ui.Flash
	for _, f := range stateOf(t, app).sessions.TakeFlashes(token) {
		out = append(out, ui.Flash(f))
	}
	return out
}

// expectRedirect fails unless res is a 303 to loc.
func expectRedirect(t testing.TB, res *http.Response, loc string) {
	t.Helper()
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != loc {
		t.Fatalf("answer %d to %q, want 303 to %q", res.StatusCode, res.Header.Get("Location"), loc)
	}
}

// expectFlash fails unless exactly one flash of kind containing text is
// queued for the session of token.
func expectFlash(t testing.TB, app *tests.TestApp, token, kind, text string) ui.Flash {
	t.Helper()
	fs := flashesOf(t, app, token)
	if len(fs) != 1 || fs[0].Kind != kind || !strings.Contains(fs[0].Text, text) {
		t.Fatalf("flashes %+v, want one %s with %q", fs, kind, text)
	}
	return fs[0]
}

// mustCodeSession signs user in by e-mail code in another browser: a key
// of the session's own, and the session on it. It returns the session.
func mustCodeSession(t testing.TB, app core.App, user *core.Record) *core.Record {
	t.Helper()
	_, key, err := accounts.CreateAPIKey(context.Background(), app, user, "Web sign-in")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := accounts.CreateSession(app, key, true, "Mozilla/5.0 (Macintosh; Intel Mac OS X 10.15; rv:133.0) Gecko/20100101 Firefox/133.0")
	if err != nil {
		t.Fatal(err)
	}
	rec, err := app.FindFirstRecordByData(accounts.SessionsCollection, "token_hash", accounts.HashSecret(tok))
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// mustKeyWithID stores an API key of user with a fixed record id, so that
// a scenario's URL can name it.
func mustKeyWithID(t testing.TB, app core.App, user *core.Record, id, name string) {
	t.Helper()
	col, err := app.FindCollectionByNameOrId(accounts.APIKeysCollection)
	if err != nil {
		t.Fatal(err)
	}
	rec := core.NewRecord(col)
	rec.Id = id
	rec.Set("user", user.Id)
	rec.Set("name", name)
	rec.Set("prefix", "sd_"+id[:8])
	rec.Set("hash", accounts.HashSecret(id))
	if err := app.Save(rec); err != nil {
		t.Fatal(err)
	}
}

// aliceWithSecondBrowser is the fixture app where alice also signed in by
// code in another browser.
func aliceWithSecondBrowser(t testing.TB) *tests.TestApp {
	app, _ := newFixtureApp(t)
	alice, _ := app.FindAuthRecordByEmail("users", "alice@example.com")
	mustCodeSession(t, app, alice)
	return app
}

// liveSessions counts the live sessions of the user with email.
func liveSessions(t testing.TB, app core.App, email string) []*core.Record {
	t.Helper()
	u, _ := app.FindAuthRecordByEmail("users", email)
	ss, err := accounts.ListSessions(app, u)
	if err != nil {
		t.Fatal(err)
	}
	return ss
}

// aliceWithOldLaptopKey is the fixture app where alice also has the key
// oldlaptopkey000, named "old laptop".
func aliceWithOldLaptopKey(t testing.TB) *tests.TestApp {
	app, _ := newFixtureApp(t)
	alice, _ := app.FindAuthRecordByEmail("users", "alice@example.com")
	mustKeyWithID(t, app, alice, "oldlaptopkey000", "old laptop")
	return app
}

func TestAccountKeyForms(t *testing.T) {
	t.Parallel()
	runScenarios(t, []tests.ApiScenario{
		{
			Name:           "create a key: 303, the key shown once by a flash",
			Method:         http.MethodPost,
			URL:            "/account/keys",
			Body:           formBody("name", "laptop"),
			Headers:        withHeaders(sameOrigin, cookie(sessionAlice)),
			ExpectedStatus: 303,
			TestAppFactory: newTestApp,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, res *http.Response) {
				expectRedirect(t, res, "/account")
				f := expectFlash(t, app, sessionAlice, ui.FlashSuccess, "New key laptop created. Copy it now: it is shown once.")
				if _, err := accounts.UserByAPIKey(app, f.Secret); err != nil {
					t.Fatalf("the flash's secret %q is not the new key", f.Secret)
				}
				alice, _ := app.FindAuthRecordByEmail("users", "alice@example.com")
				if keys, _ := accounts.ListAPIKeys(app, alice); len(keys) != 2 || keys[0].GetString("name") != "laptop" {
					t.Fatalf("%d keys", len(keys))
				}
			},
		},
		{
			Name:           "a name too long: 303 back with an error, no key",
			Method:         http.MethodPost,
			URL:            "/account/keys",
			Body:           formBody("name", strings.Repeat("é", maxKeyNameLen+1)),
			Headers:        withHeaders(sameOrigin, cookie(sessionAlice)),
			ExpectedStatus: 303,
			TestAppFactory: newTestApp,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, res *http.Response) {
				expectRedirect(t, res, "/account")
				expectFlash(t, app, sessionAlice, ui.FlashError, "at most 100 characters")
				alice, _ := app.FindAuthRecordByEmail("users", "alice@example.com")
				if keys, _ := accounts.ListAPIKeys(app, alice); len(keys) != 1 {
					t.Fatalf("%d keys", len(keys))
				}
			},
		},
		{
			Name:            "revoke a key asks first: a page with the form",
			Method:          http.MethodGet,
			URL:             "/account/keys/oldlaptopkey000/revoke",
			Headers:         cookie(sessionAlice),
			ExpectedStatus:  200,
			ExpectedContent: []string{`data-testid="key-revoke"`, "Revoke the key old laptop (", `action="/account/keys/oldlaptopkey000/revoke"`, `name="confirm" value="yes"`},
			// this browser's session stands on alice's first key, not this one
			NotExpectedContent: []string{"signs you out here"},
			TestAppFactory:     aliceWithOldLaptopKey,
		},
		{
			Name:            "the question about another account's key: 404",
			Method:          http.MethodGet,
			URL:             "/account/keys/oldlaptopkey000/revoke",
			Headers:         cookie(sessionBob),
			ExpectedStatus:  404,
			ExpectedContent: []string{"Key not found"},
			TestAppFactory:  aliceWithOldLaptopKey,
		},
		{
			Name:           "a post without confirm only goes to the question",
			Method:         http.MethodPost,
			URL:            "/account/keys/oldlaptopkey000/revoke",
			Headers:        withHeaders(sameOrigin, cookie(sessionAlice)),
			ExpectedStatus: 303,
			TestAppFactory: aliceWithOldLaptopKey,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, res *http.Response) {
				expectRedirect(t, res, "/account/keys/oldlaptopkey000/revoke")
				if _, err := app.FindRecordById(accounts.APIKeysCollection, "oldlaptopkey000"); err != nil {
					t.Fatal("key revoked without confirmation")
				}
			},
		},
		{
			Name:           "an already revoked key: 303 with a message",
			Method:         http.MethodPost,
			URL:            "/account/keys/nosuchkey000000/revoke",
			Body:           formBody("confirm", "yes"),
			Headers:        withHeaders(sameOrigin, cookie(sessionAlice)),
			ExpectedStatus: 303,
			TestAppFactory: newTestApp,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, res *http.Response) {
				expectRedirect(t, res, "/account")
				expectFlash(t, app, sessionAlice, ui.FlashError, "already revoked")
			},
		},
		{
			Name:           "revoke a key: 303 with a flash",
			Method:         http.MethodPost,
			URL:            "/account/keys/oldlaptopkey000/revoke",
			Body:           formBody("confirm", "yes"),
			Headers:        withHeaders(sameOrigin, cookie(sessionAlice)),
			ExpectedStatus: 303,
			TestAppFactory: aliceWithOldLaptopKey,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, res *http.Response) {
				expectRedirect(t, res, "/account")
				expectFlash(t, app, sessionAlice, ui.FlashSuccess, "Key old laptop (")
				if _, err := app.FindRecordById(accounts.APIKeysCollection, "oldlaptopkey000"); err == nil {
					t.Fatal("key not revoked")
				}
			},
		},
	})
}
