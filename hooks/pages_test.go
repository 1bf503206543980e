package hooks

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"sitedrop/sites/accounts"
	"sitedrop/ui"

	"github.com/pocketbase/pocketbase/tests"
)

// sameOrigin is what a browser sends with a form post from the web host.
var sameOrigin = map[string]string{
	"Origin":         "http://web.test",
	"Sec-Fetch-Site": "same-origin",
	"Content-Type":   "application/x-www-form-urlencoded",
}

func formBody(kv ...string) *strings.Reader {
	v := url.Values{}
	for i := 0; i < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return strings.NewReader(v.Encode())
}

func TestClaimPages(t *testing.T) {
	t.Parallel()
	claimURL := "/claim/anon-site?token=" + url.QueryEscape(anonToken)
	runScenarios(t, []tests.ApiScenario{
		{
			Name:               "signed out: the site and a way to sign in and return",
			Method:             http.MethodGet,
			URL:                claimURL,
			ExpectedStatus:     200,
			ExpectedContent:    []string{`data-testid="site-link"`, `href="http://anon-site.sites.test/"`, `data-testid="claim-signin"`, `/auth/login?next=` + url.QueryEscape(claimURL), "expires in", "minutes"},
			NotExpectedContent: []string{`data-testid="claim-button"`},
			TestAppFactory:     newTestApp,
		},
		{
			Name:               "signed in: one button claims it",
			Method:             http.MethodGet,
			URL:                claimURL,
			Headers:            cookie(sessionBob),
			ExpectedStatus:     200,
			ExpectedContent:    []string{`data-testid="claim-button"`, `action="/claim/anon-site"`, `value="` + anonToken + `"`},
			NotExpectedContent: []string{`data-testid="claim-signin"`},
			TestAppFactory:     newTestApp,
		},
		{
			Name:            "a wrong token is a clear 400 page",
			Method:          http.MethodGet,
			URL:             "/claim/anon-site?token=wrong",
			ExpectedStatus:  400,
			ExpectedContent: []string{`data-testid="error-page"`, "This claim link is not valid"},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "an expired site is a 404 page",
			Method:          http.MethodGet,
			URL:             "/claim/old-anon?token=" + url.QueryEscape(oldToken),
			ExpectedStatus:  404,
			ExpectedContent: []string{`data-testid="error-page"`, "cannot be claimed"},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "an owned site is a 404 page",
			Method:          http.MethodGet,
			URL:             "/claim/alice-site?token=x",
			ExpectedStatus:  404,
			ExpectedContent: []string{"cannot be claimed"},
			TestAppFactory:  newTestApp,
		},
		{
			Name:           "claim button: 303 to the site's page, a flash says it is claimed",
			Method:         http.MethodPost,
			URL:            "/claim/anon-site",
			Body:           formBody("token", anonToken),
			Headers:        withHeaders(sameOrigin, cookie(sessionBob)),
			ExpectedStatus: 303,
			TestAppFactory: newTestApp,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, res *http.Response) {
				expectRedirect(t, res, "/account/sites/"+idAnonSite)
				expectFlash(t, app, sessionBob, ui.FlashSuccess, "Claimed: anon-site is now yours")
				rec, _ := app.FindRecordById("deployments", idAnonSite)
				bob, _ := app.FindAuthRecordByEmail("users", "bob@example.com")
				if rec.GetString("owner") != bob.Id || !rec.GetDateTime("expires_at").IsZero() {
					t.Fatal("not claimed")
				}
			},
		},
		{
			Name:           "the claim posted again by its claimer: 303 to the site's page, nothing changes",
			Method:         http.MethodPost,
			URL:            "/claim/anon-site",
			Body:           formBody("token", anonToken),
			Headers:        withHeaders(sameOrigin, cookie(sessionBob)),
			ExpectedStatus: 303,
			TestAppFactory: bobClaimedAnon,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, res *http.Response) {
				expectRedirect(t, res, "/account/sites/"+idAnonSite)
				rec, _ := app.FindRecordById("deployments", idAnonSite)
				bob, _ := app.FindAuthRecordByEmail("users", "bob@example.com")
				if rec.GetString("owner") != bob.Id {
					t.Fatal("owner changed")
				}
			},
		},
		{
			Name:               "the claim link opened again by its claimer says the site is theirs",
			Method:             http.MethodGet,
			URL:                claimURL,
			Headers:            cookie(sessionBob),
			ExpectedStatus:     200,
			ExpectedContent:    []string{`data-testid="claim-done"`, "This site is yours", `href="/account/sites/` + idAnonSite + `"`, "http://anon-site.sites.test/"},
			NotExpectedContent: []string{"cannot be claimed", `data-testid="claim-button"`},
			TestAppFactory:     bobClaimedAnon,
		},
		{
			Name:               "the claim link of a claimed site, signed out: cannot be claimed, sign in to see it",
			Method:             http.MethodGet,
			URL:                claimURL,
			ExpectedStatus:     404,
			ExpectedContent:    []string{"cannot be claimed", "If you claimed it, sign in to see it.", `href="/auth/login?next=` + url.QueryEscape(claimURL) + `"`},
			NotExpectedContent: []string{"/account/sites/" + idAnonSite},
			TestAppFactory:     bobClaimedAnon,
		},
		{
			Name:               "the claim link of a claimed site, to anyone else: cannot be claimed",
			Method:             http.MethodGet,
			URL:                claimURL,
			Headers:            cookie(sessionAlice),
			ExpectedStatus:     404,
			ExpectedContent:    []string{"cannot be claimed"},
			NotExpectedContent: []string{"/account/sites/" + idAnonSite, "sign in to see it"},
			TestAppFactory:     bobClaimedAnon,
		},
		{
			Name:            "the claim posted by anyone else once claimed: 404 page, nothing changes",
			Method:          http.MethodPost,
			URL:             "/claim/anon-site",
			Body:            formBody("token", anonToken),
			Headers:         withHeaders(sameOrigin, cookie(sessionAlice)),
			ExpectedStatus:  404,
			ExpectedContent: []string{"cannot be claimed"},
			TestAppFactory:  bobClaimedAnon,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, res *http.Response) {
				rec, _ := app.FindRecordById("deployments", idAnonSite)
				bob, _ := app.FindAuthRecordByEmail("users", "bob@example.com")
				if rec.GetString("owner") != bob.Id {
					t.Fatal("owner changed")
				}
			},
		},
		{
			Name:           "claim button signed out goes to sign-in and back",
			Method:         http.MethodPost,
			URL:            "/claim/anon-site",
			Body:           formBody("token", anonToken),
			Headers:        sameOrigin,
			ExpectedStatus: 303,
			TestAppFactory: newTestApp,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, res *http.Response) {
				if loc := res.Header.Get("Location"); loc != "/auth/login?next="+url.QueryEscape(claimURL) {
					t.Fatalf("Location %q", loc)
				}
			},
		},
		{
			Name:            "claim from another origin is refused",
			Method:          http.MethodPost,
			URL:             "/claim/anon-site",
			Body:            formBody("token", anonToken),
			Headers:         withHeaders(cookie(sessionBob), map[string]string{"Origin": "http://anon-site.sites.test", "Sec-Fetch-Site": "same-site", "Content-Type": "application/x-www-form-urlencoded"}),
			ExpectedStatus:  403,
			ExpectedContent: []string{`data-testid="error-page"`},
			TestAppFactory:  newTestApp,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, _ *http.Response) {
				rec, _ := app.FindRecordById("deployments", idAnonSite)
				if rec.GetString("owner") != "" {
					t.Fatal("a cross-origin claim went through")
				}
			},
		},
		{
			Name:           "claim with a full plan: 303 back to the claim link, a flash says why",
			Method:         http.MethodPost,
			URL:            "/claim/anon-site",
			Body:           formBody("token", anonToken),
			Headers:        withHeaders(sameOrigin, cookie(sessionBob)),
			ExpectedStatus: 303,
			TestAppFactory: func(t testing.TB) *tests.TestApp {
				app, sd := newFixtureApp(t)
				bob, _ := app.FindAuthRecordByEmail("users", "bob@example.com")
				for _, s := range []string{"two", "three", "four", "five"} {
					mustDeploy(t, sd, bob, "", "bob-"+s, "x", "")
				}
				return app
			},
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, res *http.Response) {
				expectRedirect(t, res, claimURL)
				expectFlash(t, app, sessionBob, ui.FlashError, "Deployment limit reached")
				if rec, _ := app.FindRecordById("deployments", idAnonSite); rec.GetString("owner") != "" {
					t.Fatal("claimed over the limit")
				}
			},
		},
	})
}

// bobClaimedAnon is the fixture app where bob has claimed anon-site.
func bobClaimedAnon(t testing.TB) *tests.TestApp {
	app, sd := newFixtureApp(t)
	bob, _ := app.FindAuthRecordByEmail("users", "bob@example.com")
	if _, err := sd.svc.Claim(context.Background(), bob, "anon-site", anonToken); err != nil {
		t.Fatal(err)
	}
	return app
}

func TestAccountPages(t *testing.T) {
	t.Parallel()
	runScenarios(t, []tests.ApiScenario{
		{
			Name:           "signed out goes to sign-in",
			Method:         http.MethodGet,
			URL:            "/account",
			ExpectedStatus: 303,
			TestAppFactory: newTestApp,
			AfterTestFunc: func(t testing.TB, _ *tests.TestApp, res *http.Response) {
				if loc := res.Header.Get("Location"); loc != "/auth/login?next=%2Faccount" {
					t.Fatalf("Location %q", loc)
				}
			},
		},
		{
			Name:               "lists the user's sites, slots and keys",
			Method:             http.MethodGet,
			URL:                "/account",
			Headers:            cookie(sessionAlice),
			ExpectedStatus:     200,
			ExpectedContent:    []string{"alice@example.com", `data-testid="deployment-row"`, "http://alice-site.sites.test/", `data-testid="slots"`, "1 of 5", keyAlice[:11], `data-testid="sign-out"`},
			NotExpectedContent: []string{"bob-site", keyAlice},
			TestAppFactory:     newTestApp,
		},
		{
			Name:            "create a key from another origin is refused",
			Method:          http.MethodPost,
			URL:             "/account/keys",
			Body:            formBody("name", "evil"),
			Headers:         withHeaders(cookie(sessionAlice), map[string]string{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site", "Content-Type": "application/x-www-form-urlencoded"}),
			ExpectedStatus:  403,
			ExpectedContent: []string{`data-testid="error-page"`},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "the question about someone else's key is a 404",
			Method:          http.MethodGet,
			URL:             "/account/keys/KEYID/revoke",
			Headers:         cookie(sessionBob),
			ExpectedStatus:  404,
			ExpectedContent: []string{"Key not found"},
			TestAppFactory:  newTestApp,
		},
		{
			Name:           "sign-out button",
			Method:         http.MethodPost,
			URL:            "/auth/logout",
			Headers:        withHeaders(sameOrigin, cookie(sessionAlice)),
			ExpectedStatus: 303,
			TestAppFactory: newTestApp,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, res *http.Response) {
				expectRedirect(t, res, "/auth/login?signed_out=1")
				if _, err := accounts.UserBySession(app, sessionAlice); err == nil {
					t.Fatal("still signed in")
				}
			},
		},
		{
			Name:            "after signing out, the sign-in page says so",
			Method:          http.MethodGet,
			URL:             "/auth/login?signed_out=1",
			ExpectedStatus:  200,
			ExpectedContent: []string{`data-testid="signed-out"`, "You are signed out of this browser.", `required autofocus autocomplete="email"`},
			TestAppFactory:  newTestApp,
		},
		{
			Name:               "signed in, the sign-out message is not shown",
			Method:             http.MethodGet,
			URL:                "/auth/login?signed_out=1",
			Headers:            cookie(sessionAlice),
			ExpectedStatus:     200,
			NotExpectedContent: []string{`data-testid="signed-out"`},
			TestAppFactory:     newTestApp,
		},
	})
}

func TestRevokeOwnKeyFromAccountPage(t *testing.T) {
	t.Parallel()
	app, _ := newFixtureApp(t)
	defer app.Cleanup()
	mux := newMux(t, app)
	alice, _ := app.FindAuthRecordByEmail("users", "alice@example.com")
	extra, extraKey, err := accounts.CreateAPIKey(context.Background(), app, alice, "extra")
	if err != nil {
		t.Fatal(err)
	}
	res, body := do(t, mux, http.MethodPost, "/account/keys/"+extraKey.Id+"/revoke", "confirm=yes", withHeaders(sameOrigin, cookie(sessionAlice)))
	if res.StatusCode != 303 || res.Header.Get("Location") != "/account" {
		t.Fatalf("revoke: %d %s", res.StatusCode, body)
	}
	if _, err := accounts.UserByAPIKey(app, extra); err == nil {
		t.Fatal("revoked key still works")
	}
	bob, _ := app.FindAuthRecordByEmail("users", "bob@example.com")
	bobKeys, _ := accounts.ListAPIKeys(app, bob)
	if res, _ := do(t, mux, http.MethodPost, "/account/keys/"+bobKeys[0].Id+"/revoke", "confirm=yes", withHeaders(sameOrigin, cookie(sessionAlice))); res.StatusCode != 303 {
		t.Fatalf("revoking another account's key: %d", res.StatusCode)
	}
	if _, err := accounts.UserByAPIKey(app, keyBob); err != nil {
		t.Fatal("another account's key was revoked")
	}
	// revoking the key this browser session stands on signs it out
	keys, _ := accounts.ListAPIKeys(app, alice)
	if _, body := do(t, mux, http.MethodGet, "/account/keys/"+keys[0].Id+"/revoke", "", cookie(sessionAlice)); !strings.Contains(body, "signs you out here") {
		t.Error("the question does not warn that this browser's session stands on the key")
	}
	do(t, mux, http.MethodPost, "/account/keys/"+keys[0].Id+"/revoke", "confirm=yes", withHeaders(sameOrigin, cookie(sessionAlice)))
	if res, _ := do(t, mux, http.MethodGet, "/account", "", cookie(sessionAlice)); res.StatusCode != 303 {
		t.Fatalf("account after revoking the session's key: %d, want 303 to sign-in", res.StatusCode)
	}
}
