package hooks

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tests"

	"sitedrop/sites"
	"sitedrop/sites/intake"
	"sitedrop/sites/wire"
)

// protectAlice gives alice-site a password and its share link, before a
// scenario.
func protectAlice(t testing.TB, app *tests.TestApp) {
	t.Helper()
	sd := stateOf(t, app)
	rec, err := app.FindRecordById("deployments", idAliceSite)
	if err != nil {
		t.Fatal(err)
	}
	h, err := sites.HashPassword("alice's password")
	if err != nil {
		t.Fatal(err)
	}
	on := true
	if _, err := sd.svc.SetProtection(context.Background(), rec, sites.ProtectionChange{PasswordHash: &h, Link: &on}); err != nil {
		t.Fatal(err)
	}
}

// siteAnswer fetches target (a path and query) from the site at host.
func siteAnswer(t testing.TB, app *tests.TestApp, host, target string) *http.Response {
	t.Helper()
	sd := stateOf(t, app)
	slug, _ := sites.SlugFromHost(host, sd.cfg.SitesDomain)
	rec := httptest.NewRecorder()
	sd.server.ServeSite(rec, httptest.NewRequest(http.MethodGet, "http://"+host+target, nil), slug)
	return rec.Result()
}

// expectGated checks that the site at host answers the gate (protected)
// or its page (public), and that shareURL (when not "") lets in.
func expectGated(t testing.TB, app *tests.TestApp, host string, protected bool, shareURL string) {
	t.Helper()
	res := siteAnswer(t, app, host, "/")
	if protected != (res.StatusCode == http.StatusUnauthorized) {
		t.Fatalf("site %s: %d, protected %v", host, res.StatusCode, protected)
	}
	if shareURL == "" {
		return
	}
	u, err := url.Parse(shareURL)
	if err != nil || u.Host != host {
		t.Fatalf("share_url %q", shareURL)
	}
	res = siteAnswer(t, app, host, u.RequestURI())
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/" || res.Header.Get("Set-Cookie") == "" {
		t.Fatalf("share link: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
}

func TestDeployProtection(t *testing.T) {
	t.Parallel()
	shareOf := func(t testing.TB, res *http.Response) string {
		s, _ := decodeJSONBody(t, res)["share_url"].(string)
		return s
	}
	scenarios := []tests.ApiScenario{
		{
			Name:            "POST with password and protect",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Headers:         bearer(keyAlice),
			Body:            strings.NewReader(`{"html":"<p>secret</p>","slug":"guarded","password":"open sesame","protect":true}`),
			ExpectedStatus:  200,
			ExpectedContent: []string{`"share_url":"http://guarded.sites.test/?_token=`},
			TestAppFactory:  newTestApp,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, res *http.Response) {
				expectGated(t, app, "guarded.sites.test", true, shareOf(t, res))
				rec, _ := app.FindFirstRecordByData("deployments", "slug", "guarded")
				if h := rec.GetString("protect_password_hash"); !strings.HasPrefix(h, "$2") || strings.Contains(h, "open sesame") {
					t.Fatalf("stored hash %q", h)
				}
			},
		},
		{
			Name:               "POST with a password only: no share_url",
			Method:             http.MethodPost,
			URL:                "/deploy",
			Headers:            bearer(keyAlice),
			Body:               strings.NewReader(`{"html":"<p>secret</p>","slug":"guarded","password":"open sesame"}`),
			ExpectedStatus:     200,
			NotExpectedContent: []string{"share_url"},
			TestAppFactory:     newTestApp,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, _ *http.Response) {
				expectGated(t, app, "guarded.sites.test", true, "")
			},
		},
		{
			Name:            "anonymous POST with protect",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Body:            strings.NewReader(`{"html":"<p>secret</p>","slug":"anon-guarded","protect":true}`),
			ExpectedStatus:  200,
			ExpectedContent: []string{`"claim_token":"`, `"share_url":"http://anon-guarded.sites.test/?_token=`},
			TestAppFactory:  newTestApp,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, res *http.Response) {
				expectGated(t, app, "anon-guarded.sites.test", true, shareOf(t, res))
			},
		},
		{
			Name:            "password too short",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Headers:         bearer(keyAlice),
			Body:            strings.NewReader(`{"html":"<p>x</p>","slug":"guarded","password":"short"}`),
			ExpectedStatus:  400,
			ExpectedContent: []string{errBody("password must be 8 to 128 characters")},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "password too long",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Headers:         bearer(keyAlice),
			Body:            strings.NewReader(`{"html":"<p>x</p>","slug":"guarded","password":"` + strings.Repeat("p", 129) + `"}`),
			ExpectedStatus:  400,
			ExpectedContent: []string{errBody("password must be 8 to 128 characters")},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "password of the wrong type",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Headers:         bearer(keyAlice),
			Body:            strings.NewReader(`{"html":"<p>x</p>","password":12345678}`),
			ExpectedStatus:  400,
			ExpectedContent: []string{errBody(wire.ErrPasswordType.Error())},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "protect of the wrong value",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Headers:         bearer(keyAlice),
			Body:            strings.NewReader(`{"html":"<p>x</p>","protect":"yes"}`),
			ExpectedStatus:  400,
			ExpectedContent: []string{errBody(wire.ErrProtectValue.Error())},
			TestAppFactory:  newTestApp,
		},
		{
			Name:               "PUT without the fields keeps the protection",
			Method:             http.MethodPut,
			URL:                "/deploy/" + idAliceSite,
			Headers:            bearer(keyAlice),
			Body:               strings.NewReader(`{"html":"<p>new content</p>"}`),
			BeforeTestFunc:     func(t testing.TB, app *tests.TestApp, _ *core.ServeEvent) { protectAlice(t, app) },
			ExpectedStatus:     200,
			ExpectedContent:    []string{`"share_url":"http://alice-site.sites.test/?_token=`},
			TestAppFactory:     newTestApp,
			NotExpectedContent: []string{"password"},
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, res *http.Response) {
				expectGated(t, app, "alice-site.sites.test", true, shareOf(t, res))
			},
		},
		{
			Name:               "PUT with password null and protect false makes the site public",
			Method:             http.MethodPut,
			URL:                "/deploy/" + idAliceSite,
			Headers:            bearer(keyAlice),
			Body:               strings.NewReader(`{"html":"<p>public again</p>","password":null,"protect":false}`),
			BeforeTestFunc:     func(t testing.TB, app *tests.TestApp, _ *core.ServeEvent) { protectAlice(t, app) },
			ExpectedStatus:     200,
			NotExpectedContent: []string{"share_url"},
			TestAppFactory:     newTestApp,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, _ *http.Response) {
				expectGated(t, app, "alice-site.sites.test", false, "")
				rec, _ := app.FindRecordById("deployments", idAliceSite)
				if rec.GetString("protect_secret") != "" || rec.GetString("protect_password_hash") != "" {
					t.Fatal("the secrets of a public site are kept")
				}
			},
		},
		{
			Name:            `PUT with protect "rotate": a new share link, the old one refused`,
			Method:          http.MethodPut,
			URL:             "/deploy/" + idAliceSite,
			Headers:         bearer(keyAlice),
			Body:            strings.NewReader(`{"html":"<p>rotated</p>","protect":"rotate"}`),
			BeforeTestFunc:  func(t testing.TB, app *tests.TestApp, _ *core.ServeEvent) { protectAlice(t, app) },
			ExpectedStatus:  200,
			ExpectedContent: []string{`"share_url":"`},
			TestAppFactory:  newTestApp,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, res *http.Response) {
				share := shareOf(t, res)
				expectGated(t, app, "alice-site.sites.test", true, share)
				rec, _ := app.FindRecordById("deployments", idAliceSite)
				p := sites.ProtectionOf(rec)
				if !strings.HasSuffix(share, url.QueryEscape(p.ShareToken())) || !p.CheckPassword("alice's password") {
					t.Fatal("rotation changed more than the link")
				}
			},
		},
		{
			Name:               "the status says protected, never a secret",
			Method:             http.MethodGet,
			URL:                "/deploy/" + idAliceSite,
			Headers:            bearer(keyAlice),
			BeforeTestFunc:     func(t testing.TB, app *tests.TestApp, _ *core.ServeEvent) { protectAlice(t, app) },
			ExpectedStatus:     200,
			ExpectedContent:    []string{`"protected":true`},
			NotExpectedContent: []string{"share_url", "_token", "$2a$", "secret", "hash"},
			TestAppFactory:     newTestApp,
		},
		{
			Name:            "the status of a public site",
			Method:          http.MethodGet,
			URL:             "/deploy/" + idAliceSite,
			Headers:         bearer(keyAlice),
			ExpectedStatus:  200,
			ExpectedContent: []string{`"protected":false`},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "archive deploy with protect in the query and the password in a header",
			Method:          http.MethodPost,
			URL:             "/deploy?slug=zipped-guard&protect=true",
			Headers:         withHeaders(bearer(keyAlice), map[string]string{"Content-Type": "application/zip", intake.PasswordHeader: "zip password"}),
			Body:            zipOf(t, "index.html", "<p>zipped</p>"),
			ExpectedStatus:  200,
			ExpectedContent: []string{`"share_url":"http://zipped-guard.sites.test/?_token=`},
			TestAppFactory:  newTestApp,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, res *http.Response) {
				expectGated(t, app, "zipped-guard.sites.test", true, shareOf(t, res))
				site, _ := stateOf(t, app).svc.LoadSite("zipped-guard")
				if !site.Protection.CheckPassword("zip password") {
					t.Fatal("the header's password is not the site's")
				}
			},
		},
		{
			Name:            "archive deploy with a bad protect",
			Method:          http.MethodPost,
			URL:             "/deploy?protect=maybe",
			Headers:         withHeaders(bearer(keyAlice), map[string]string{"Content-Type": "application/zip"}),
			Body:            zipOf(t, "index.html", "<p>zipped</p>"),
			ExpectedStatus:  400,
			ExpectedContent: []string{errBody(wire.ErrProtectValue.Error())},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "the forms of a protected site still reach /submit",
			Method:          http.MethodPost,
			URL:             "/submit/" + idAliceSite,
			Body:            strings.NewReader("name=Ann"),
			Headers:         map[string]string{"Content-Type": "application/x-www-form-urlencoded"},
			BeforeTestFunc:  func(t testing.TB, app *tests.TestApp, _ *core.ServeEvent) { protectAlice(t, app) },
			ExpectedStatus:  200,
			ExpectedContent: []string{`"message":"Submission received"`},
			TestAppFactory:  newTestApp,
			AfterTestFunc:   expectSubs(idAliceSite, 1),
		},
	}
	runScenarios(t, scenarios)
}

// TestProtectionFromAdmin: switching protect_link on in the admin
// dashboard (a plain record save) makes a working protection, with its
// secret; switching it off again drops the secret.
func TestProtectionFromAdmin(t *testing.T) {
	t.Parallel()
	app, sd := newFixtureApp(t)
	rec, _ := app.FindRecordById("deployments", idAliceSite)
	rec.Set("protect_link", true)
	if err := app.Save(rec); err != nil {
		t.Fatal(err)
	}
	site, _ := sd.svc.LoadSite("alice-site")
	if site.Protection == nil || !site.Protection.CheckToken(site.Protection.ShareToken()) {
		t.Fatalf("protection %+v", site.Protection)
	}
	if res := siteAnswer(t, app, "alice-site.sites.test", "/"); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("site: %d", res.StatusCode)
	}
	rec.Set("protect_link", false)
	if err := app.Save(rec); err != nil {
		t.Fatal(err)
	}
	if fresh, _ := app.FindRecordById("deployments", idAliceSite); fresh.GetString("protect_secret") != "" {
		t.Fatal("the secret of a public site is kept")
	}
}

// TestPasswordFromAdmin: a superuser types a password into
// protect_password_hash through PocketBase's records API (what the
// dashboard does): it is stored hashed and lets visitors in; one that
// breaks the API's rules is refused on that field and changes nothing;
// saving the record again keeps the hash; clearing the field removes the
// password.
func TestPasswordFromAdmin(t *testing.T) {
	t.Parallel()
	app, sd := newFixtureApp(t)
	mux := newMux(t, app)
	token := superuserToken(t, app)
	edit := func(body string) (int, string) {
		t.Helper()
		res, out := do(t, mux, http.MethodPatch, "/api/collections/deployments/records/"+idAliceSite, body,
			map[string]string{"Authorization": token, "Content-Type": "application/json"})
		return res.StatusCode, out
	}
	stored := func() string {
		t.Helper()
		rec, err := app.FindRecordById("deployments", idAliceSite)
		if err != nil {
			t.Fatal(err)
		}
		return rec.GetString("protect_password_hash")
	}

	if code, out := edit(`{"protect_password_hash":"typed in the dashboard"}`); code != 200 {
		t.Fatalf("set the password: %d %s", code, out)
	}
	hash := stored()
	site, _ := sd.svc.LoadSite("alice-site")
	if hash == "typed in the dashboard" || site.Protection == nil || !site.Protection.CheckPassword("typed in the dashboard") {
		t.Fatalf("the typed password: stored %q, protection %+v", hash, site.Protection)
	}
	if res := siteAnswer(t, app, "alice-site.sites.test", "/"); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("site: %d", res.StatusCode)
	}

	for _, bad := range []string{"short", strings.Repeat("x", sites.MaxPasswordLen+1)} {
		code, out := edit(`{"protect_password_hash":"` + bad + `"}`)
		if code != 400 || !strings.Contains(out, `"protect_password_hash"`) || !strings.Contains(out, "must be 8 to 128 characters") {
			t.Fatalf("password %q: %d %s", bad, code, out)
		}
		if stored() != hash {
			t.Fatalf("a refused password changed the hash")
		}
	}

	// the dashboard sends the hash back with any other edit
	if code, out := edit(`{"protect_password_hash":"` + hash + `","title":"Renamed"}`); code != 200 || stored() != hash {
		t.Fatalf("save again: %d %s; hash %q, was %q", code, out, stored(), hash)
	}

	if code, out := edit(`{"protect_password_hash":""}`); code != 200 {
		t.Fatalf("remove the password: %d %s", code, out)
	}
	if res := siteAnswer(t, app, "alice-site.sites.test", "/"); res.StatusCode != 200 {
		t.Fatalf("site after removing the password: %d", res.StatusCode)
	}
	if rec, _ := app.FindRecordById("deployments", idAliceSite); rec.GetString("protect_secret") != "" {
		t.Fatal("the secret of a public site is kept")
	}
}
