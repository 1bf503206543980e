package hooks

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/pocketbase/pocketbase/tests"

	"sitedrop/sites"
	"sitedrop/sites/analytics/statsdb"
)

// idPiaSite is the site usageApp deploys for pia (pro plan).
const idPiaSite = "piasite00000001"

// usageApp is a fixture app with traffic: pia (pro) owns a site of
// files (aaaa twice, cc: 6 bytes of storage) that served 7+3 page views
// and 700+300 bytes within the last 30 days and more before them; bob's
// site served more (5000 bytes), the anonymous site most (9000 bytes,
// owned by no account); alice's site served nothing.
func usageApp(t testing.TB) *tests.TestApp {
	app, sd := newFixtureApp(t)
	pia, err := app.FindAuthRecordByEmail("users", "pia@example.com")
	if err != nil {
		t.Fatal(err)
	}
	up := sites.Upload{StorageType: sites.StorageFiles, Files: []sites.File{
		{Path: "a.txt", ContentType: "text/plain", Data: []byte("aaaa")},
		{Path: "copy/a.txt", ContentType: "text/plain", Data: []byte("aaaa")},
		{Path: "c.txt", ContentType: "text/plain", Data: []byte("cc")},
	}}
	if _, err := sd.svc.Create(context.Background(), sites.CreateParams{ID: idPiaSite, Owner: pia, Slug: "pia-site", Upload: up}); err != nil {
		t.Fatal(err)
	}
	today := time.Now().UTC()
	day := func(ago int) string { return today.AddDate(0, 0, -ago).Format(time.DateOnly) }
	for _, r := range []struct {
		dep, date    string
		views, bytes int64
	}{
		{idPiaSite, day(0), 7, 700},
		{idPiaSite, day(29), 3, 300},
		{idPiaSite, day(30), 1000, 100000}, // before the period
		{idBobSite, day(1), 50, 5000},
		{idAnonSite, day(2), 90, 9000},
	} {
		row, err := statsdb.NewRow(app)
		if err != nil {
			t.Fatal(err)
		}
		row.SetDeployment(r.dep)
		row.SetDate(r.date)
		row.SetPageViews(r.views)
		row.SetBytes(r.bytes)
		if err := app.Save(row); err != nil {
			t.Fatal(err)
		}
	}
	return app
}

// adminUsage is a GET /admin/usage scenario sent with a superuser's
// token (its own headers: the scenarios run in parallel).
func adminUsage(name, query string, status int, content ...string) tests.ApiScenario {
	return adminUsageNot(name, query, status, nil, content...)
}

// adminUsageNot is adminUsage with content the answer must not hold.
func adminUsageNot(name, query string, status int, not []string, content ...string) tests.ApiScenario {
	headers := map[string]string{}
	return tests.ApiScenario{
		Name:    name,
		Method:  http.MethodGet,
		URL:     "/admin/usage" + query,
		Headers: headers,
		TestAppFactory: func(t testing.TB) *tests.TestApp {
			app := usageApp(t)
			headers["Authorization"] = superuserToken(t, app)
			return app
		},
		ExpectedStatus:     status,
		ExpectedContent:    content,
		NotExpectedContent: not,
	}
}

func TestUsageAPI(t *testing.T) {
	since := time.Now().UTC().AddDate(0, 0, -29).Format(time.DateOnly)
	runScenarios(t, []tests.ApiScenario{
		{
			Name:           "the caller's sites, storage, 30 days of traffic and plan limits",
			Method:         http.MethodGet,
			URL:            "/usage",
			Headers:        bearer(keyPia),
			TestAppFactory: usageApp,
			ExpectedStatus: 200,
			ExpectedContent: []string{
				`"plan":"pro"`, `"sites":1,`, `"storage_bytes":6,`, `"page_views":10,`, `"bytes_served":1000,`,
				`"since":"` + since + `"`, `"days":30`, `"limits":{"sites":50,"versions_per_site":10}`,
			},
		},
		{
			Name:            "an account without traffic",
			Method:          http.MethodGet,
			URL:             "/usage",
			Headers:         bearer(keyAlice),
			TestAppFactory:  usageApp,
			ExpectedStatus:  200,
			ExpectedContent: []string{`"plan":"free"`, `"sites":1,`, `"page_views":0,`, `"bytes_served":0,`, `"limits":{"sites":5,`},
		},
		{
			Name:            "no key",
			Method:          http.MethodGet,
			URL:             "/usage",
			TestAppFactory:  usageApp,
			ExpectedStatus:  401,
			ExpectedContent: []string{errBody(msgUnauthorized)},
		},
		{
			Name:            "unknown key",
			Method:          http.MethodGet,
			URL:             "/usage",
			Headers:         bearer(keyUnknown),
			TestAppFactory:  usageApp,
			ExpectedStatus:  401,
			ExpectedContent: []string{`"error":`},
		},
		{
			Name:            "POST is not allowed",
			Method:          http.MethodPost,
			URL:             "/usage",
			Headers:         bearer(keyPia),
			TestAppFactory:  usageApp,
			ExpectedStatus:  405,
			ExpectedContent: []string{`"error":`},
		},
		adminUsage("admin: accounts and sites by bytes served, most first", "", 200,
			`"since":"`+since+`"`,
			`"accounts":[{"id":"`, `"email":"bob@example.com","usage":{"plan":"free","sites":1,`,
			`"bytes_served":5000,`, `"email":"pia@example.com","usage":{"plan":"pro","sites":1,"storage_bytes":6,"page_views":10,"bytes_served":1000,`,
			`"sites":[{"id":"`+idAnonSite+`","slug":"anon-site","owner":"","page_views":90,"bytes_served":9000},`+
				`{"id":"`+idBobSite+`","slug":"bob-site","owner":"`,
			`{"id":"`+idPiaSite+`","slug":"pia-site","owner":"`,
		),
		adminUsageNot("admin: top=1 keeps the first of each", "?top=1", 200, []string{"pia@example.com", idBobSite},
			`"accounts":[{"id":"`, `"email":"bob@example.com"`, `"sites":[{"id":"`+idAnonSite+`","slug":"anon-site","owner":"","page_views":90,"bytes_served":9000}]}`),
		adminUsage("admin: top=0", "?top=0", 400, errBody(msgUsageTop)),
		adminUsage("admin: top=101", "?top=101", 400, errBody(msgUsageTop)),
		adminUsage("admin: top=abc", "?top=abc", 400, errBody(msgUsageTop)),
		{
			Name:            "admin: a user's key is not a superuser's",
			Method:          http.MethodGet,
			URL:             "/admin/usage",
			Headers:         bearer(keyPia),
			TestAppFactory:  usageApp,
			ExpectedStatus:  401,
			ExpectedContent: []string{`"error":`},
		},
		{
			Name:            "admin: no token",
			Method:          http.MethodGet,
			URL:             "/admin/usage",
			TestAppFactory:  usageApp,
			ExpectedStatus:  401,
			ExpectedContent: []string{`"error":`},
		},
	})
}

// TestAccountUsagePanel: the account page shows the account's usage,
// the same numbers as GET /usage.
func TestAccountUsagePanel(t *testing.T) {
	since := time.Now().UTC().AddDate(0, 0, -29).Format(time.DateOnly)
	runScenarios(t, []tests.ApiScenario{{
		Name:           "bob's usage",
		Method:         http.MethodGet,
		URL:            "/account",
		Headers:        cookie(sessionBob),
		TestAppFactory: usageApp,
		ExpectedStatus: 200,
		ExpectedContent: []string{
			`<h2 id="usage-h">Usage</h2>`,
			`Traffic over the last 30 days, since ` + since + ` (UTC)`,
			`data-testid="usage-sites">1 of 5 on the free plan</dd>`,
			`with up to 10 versions kept per site</dd>`,
			`data-testid="usage-views">50</dd>`,
			`data-testid="usage-served">5.0 KB</dd>`,
		},
	}})
}
