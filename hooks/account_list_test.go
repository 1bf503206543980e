package hooks

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tests"

	"sitedrop/sites"
)

// piaSites are the slugs and titles of pia's twelve sites in
// piaWithTwelveSites, oldest first.
var piaSites = []struct{ slug, title string }{
	{"apple", "Zebra shop"}, {"banana", ""}, {"cherry", "Cherry pie"}, {"damson", ""},
	{"elder", "Elder flowers"}, {"fig", ""}, {"grape", ""}, {"honeydew", "Melon fans"},
	{"kiwi", ""}, {"lemon", "Lemonade stand"}, {"mango", ""}, {"nectarine", "100% juice"},
}

// piaWithTwelveSites is the fixture app where pia (pro) has the twelve
// piaSites, created a minute apart, each version deployed when its site
// was created, but cherry's live version is the newest (deployed now).
func piaWithTwelveSites(t testing.TB) *tests.TestApp {
	app, sd := newFixtureApp(t)
	mustTwelveSites(t, app, sd, mustFindUser(t, app, "pia@example.com"))
	return app
}

// mustTwelveSites gives pia the twelve piaSites (see piaWithTwelveSites).
func mustTwelveSites(t testing.TB, app core.App, sd *built, pia *core.Record) {
	t.Helper()
	start := time.Now().UTC().Add(-24 * time.Hour)
	for i, s := range piaSites {
		rec := mustDeploy(t, sd, pia, "", s.slug, "<h1>"+s.slug+"</h1>", s.title)
		at := sites.DBTime(start.Add(time.Duration(i) * time.Minute))
		if s.slug == "cherry" {
			at = sites.DBTime(time.Now().UTC())
		}
		// the creation times are set, so that the orders are certain
		if _, err := app.DB().Update(sites.DeploymentsCollection, dbx.Params{"created": sites.DBTime(start.Add(time.Duration(i) * time.Minute))}, dbx.HashExp{"id": rec.Id}).Execute(); err != nil {
			t.Fatal(err)
		}
		if _, err := app.DB().Update(sites.VersionsCollection, dbx.Params{"created": at}, dbx.HashExp{"id": sites.DeploymentOf(rec).LiveVersion()}).Execute(); err != nil {
			t.Fatal(err)
		}
	}
}

// rowOrder returns the slugs of the account page's rows, in order.
func rowOrder(body string) []string {
	var out []string
	for _, part := range strings.Split(body, `data-testid="deployment-row"`)[1:] {
		i := strings.Index(part, "<code>")
		j := strings.Index(part, "</code>")
		if i >= 0 && j > i {
			out = append(out, part[i+len("<code>"):j])
		}
	}
	return out
}

// expectRows returns an AfterTestFunc-like check that the page lists
// want, in this order.
func expectRows(want ...string) func(t testing.TB, body string) {
	return func(t testing.TB, body string) {
		t.Helper()
		if got := rowOrder(body); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("rows %v, want %v", got, want)
		}
	}
}

func TestAccountSiteListSearchAndSort(t *testing.T) {
	t.Parallel()
	type check struct {
		name, url string
		status    int
		rows      []string
		content   []string
		absent    []string
	}
	all := func(order ...int) []string {
		var out []string
		for _, i := range order {
			out = append(out, piaSites[i].slug)
		}
		return out
	}
	checks := []check{
		{
			name: "twelve sites: the search form, newest deploy first", url: "/account", status: 200,
			rows:    all(2, 11, 10, 9, 8, 7, 6, 5, 4, 3, 1, 0),
			content: []string{`id="site-list" data-refresh`, `data-testid="site-find"`, `<option value="deployed" selected>`, `maxlength="100"`, "12 of 50 sites used"},
			absent:  []string{`data-testid="site-count"`},
		},
		{
			name: "by name: the title, else the slug, ignoring case", url: "/account?sort=name", status: 200,
			rows:    []string{"nectarine", "banana", "cherry", "damson", "elder", "fig", "grape", "kiwi", "lemon", "mango", "honeydew", "apple"},
			content: []string{`<option value="name" selected>`},
		},
		{
			name: "newest site first", url: "/account?sort=created", status: 200,
			rows: all(11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
		},
		{
			name: "a search in slugs and titles, ignoring case", url: "/account?q=+LEMON+", status: 200,
			rows:    []string{"lemon"},
			content: []string{`value="LEMON"`, `data-testid="site-count"`, "1 of 12 sites match"},
		},
		{
			name: "a search in titles", url: "/account?q=melon&sort=name", status: 200,
			rows: []string{"honeydew"},
		},
		{
			name: "several matches keep the order", url: "/account?q=an&sort=created", status: 200,
			rows: []string{"mango", "lemon", "honeydew", "banana"}, // "Lemonade", "Melon fans"
		},
		{
			name: "% is a character, not a wildcard", url: "/account?q=%25", status: 200,
			rows: []string{"nectarine"},
		},
		{
			name: "_ is a character too", url: "/account?q=_", status: 200,
			content: []string{`data-testid="no-match"`},
		},
		{
			name: "no match says so", url: "/account?q=zzz", status: 200,
			content: []string{`data-testid="no-match"`, "No site matches “zzz”"},
			absent:  []string{`data-testid="deployment-row"`, "No sites yet"},
		},
		{
			name: "an unknown order is the default", url: "/account?sort=%27;drop", status: 200,
			rows: all(2, 11, 10, 9, 8, 7, 6, 5, 4, 3, 1, 0),
		},
		{
			name: "a search too long: 400", url: "/account?q=" + strings.Repeat("a", sites.MaxSearchLen+1), status: 400,
			content: []string{"Search too long", "at most 100 characters"},
		},
	}
	var scenarios []tests.ApiScenario
	for _, c := range checks {
		c := c
		scenarios = append(scenarios, tests.ApiScenario{
			Name: c.name, Method: http.MethodGet, URL: c.url, Headers: cookie("session-of-pia"),
			ExpectedStatus: c.status, ExpectedContent: append([]string{`data-testid="`}, c.content...), NotExpectedContent: c.absent,
			TestAppFactory: func(t testing.TB) *tests.TestApp {
				app := piaWithTwelveSites(t)
				mustSession(t, app, mustFindUser(t, app, "pia@example.com"), "session-of-pia")
				return app
			},
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, res *http.Response) {
				if c.rows == nil {
					return
				}
				body, err := io.ReadAll(res.Body)
				if err != nil {
					t.Fatal(err)
				}
				expectRows(c.rows...)(t, string(body))
			},
		})
	}
	runScenarios(t, scenarios)
}

func TestAccountSiteListStates(t *testing.T) {
	t.Parallel()
	runScenarios(t, []tests.ApiScenario{
		{
			Name: "ten sites or fewer: no search form; a live site, its last deploy", Method: http.MethodGet, URL: "/account",
			Headers: cookie(sessionAlice), ExpectedStatus: 200, TestAppFactory: newTestApp,
			ExpectedContent: []string{`id="site-list" data-refresh`, `<span class="badge live" data-testid="site-state">Live</span>`,
				// the fixture's deploy is as old as the fixture: its age varies
				`<span data-testid="site-deployed">Deployed <time datetime="`},
			NotExpectedContent: []string{`data-testid="site-find"`, `data-testid="protected-badge"`, "Disabled"},
		},
		{
			Name: "a search asked for shows the form, even with few sites", Method: http.MethodGet, URL: "/account?q=zzz",
			Headers: cookie(sessionAlice), ExpectedStatus: 200, TestAppFactory: newTestApp,
			ExpectedContent: []string{`data-testid="site-find"`, `data-testid="no-match"`, "1 of 5 sites used"},
		},
		{
			Name: "a site disabled by an admin says so; a protected one too", Method: http.MethodGet, URL: "/account",
			Headers: cookie(sessionAlice), ExpectedStatus: 200,
			TestAppFactory: func(t testing.TB) *tests.TestApp {
				app, _ := newFixtureApp(t)
				rec, _ := app.FindRecordById(sites.DeploymentsCollection, idAliceSite)
				rec.Set(sites.FieldStatus, "disabled")
				rec.Set("protect_link", true)
				if err := app.Save(rec); err != nil {
					t.Fatal(err)
				}
				return app
			},
			ExpectedContent: []string{`<span class="badge disabled" data-testid="site-state">Disabled by an admin</span>`,
				`data-testid="protected-badge">Protected</span>`},
			NotExpectedContent: []string{`class="badge live"`},
		},
	})
}
