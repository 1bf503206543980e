package hooks

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"sitedrop/sites/forms"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tests"
)

// mustSubmission stores a submission for a deployment.
func mustSubmission(t testing.TB, app core.App, depID string, data map[string]any) *core.Record {
	t.Helper()
	col, _ := app.FindCollectionByNameOrId(forms.SubmissionsCollection)
	rec := core.NewRecord(col)
	rec.Set("deployment", depID)
	rec.Set("data", data)
	if err := app.Save(rec); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Millisecond) // distinct creation times, newest last
	return rec
}

// newAppWithSubmissions adds 3 submissions to alice-site and 1 to bob-site.
func newAppWithSubmissions(t testing.TB) *tests.TestApp {
	app, _ := newFixtureApp(t)
	mustSubmission(t, app, idAliceSite, map[string]any{"name": "first", "n": 1})
	mustSubmission(t, app, idAliceSite, map[string]any{"name": "second", "email": "b@example.com"})
	mustSubmission(t, app, idAliceSite, map[string]any{"name": "=HYPERLINK(\"x\")", "n": 3, "@SUM(1)": " =1+1"})
	mustSubmission(t, app, idBobSite, map[string]any{"name": "bob's"})
	return app
}

func TestSubmissionsAPI(t *testing.T) {
	t.Parallel()
	runScenarios(t, []tests.ApiScenario{
		{
			Name:            "without a key",
			Method:          http.MethodGet,
			URL:             "/submissions/" + idAliceSite,
			ExpectedStatus:  401,
			ExpectedContent: []string{errBody(msgUnauthorized)},
			TestAppFactory:  newAppWithSubmissions,
		},
		{
			Name:            "other users get 404",
			Method:          http.MethodGet,
			URL:             "/submissions/" + idAliceSite,
			Headers:         bearer(keyBob),
			ExpectedStatus:  404,
			ExpectedContent: []string{errBody(msgNotFound)},
			TestAppFactory:  newAppWithSubmissions,
		},
		{
			Name:               "newest first with total",
			Method:             http.MethodGet,
			URL:                "/submissions/" + idAliceSite,
			Headers:            bearer(keyAlice),
			ExpectedStatus:     200,
			ExpectedContent:    []string{`"page":1`, `"limit":50`, `"total":3`, `"created_at":"20`},
			NotExpectedContent: []string{"bob's"},
			TestAppFactory:     newAppWithSubmissions,
			AfterTestFunc: func(t testing.TB, _ *tests.TestApp, res *http.Response) {
				var out struct {
					Submissions []struct {
						ID   string         `json:"id"`
						Data map[string]any `json:"data"`
					}
				}
				json.NewDecoder(res.Body).Decode(&out)
				if len(out.Submissions) != 3 || out.Submissions[2].Data["name"] != "first" || out.Submissions[1].Data["name"] != "second" {
					t.Fatalf("order: %+v", out.Submissions)
				}
			},
		},
		{
			Name:               "pages",
			Method:             http.MethodGet,
			URL:                "/submissions/" + idAliceSite + "?page=2&limit=2",
			Headers:            bearer(keyAlice),
			ExpectedStatus:     200,
			ExpectedContent:    []string{`"page":2`, `"limit":2`, `"total":3`, `"name":"first"`},
			NotExpectedContent: []string{`"name":"second"`},
			TestAppFactory:     newAppWithSubmissions,
		},
		{
			Name:            "limit out of range",
			Method:          http.MethodGet,
			URL:             "/submissions/" + idAliceSite + "?limit=1000",
			Headers:         bearer(keyAlice),
			ExpectedStatus:  400,
			ExpectedContent: []string{errBody("limit must be a whole number from 1 to 200")},
			TestAppFactory:  newAppWithSubmissions,
		},
		{
			Name:            "page past the end of numbers",
			Method:          http.MethodGet,
			URL:             "/submissions/" + idAliceSite + "?page=999999999999999999&limit=200",
			Headers:         bearer(keyAlice),
			ExpectedStatus:  400,
			ExpectedContent: []string{`"error":"page must be a whole number from 1 to`},
			TestAppFactory:  newAppWithSubmissions,
		},
		{
			Name:            "page not a number",
			Method:          http.MethodGet,
			URL:             "/submissions/" + idAliceSite + "?page=x",
			Headers:         bearer(keyAlice),
			ExpectedStatus:  400,
			ExpectedContent: []string{`"error":"page must be a whole number from 1 to`},
			TestAppFactory:  newAppWithSubmissions,
		},
		{
			Name:            "CSV export",
			Method:          http.MethodGet,
			URL:             "/submissions/" + idAliceSite + "?format=csv",
			Headers:         bearer(keyAlice),
			ExpectedStatus:  200,
			ExpectedContent: []string{"id,created_at,'@SUM(1),email,n,name"},
			TestAppFactory:  newAppWithSubmissions,
			AfterTestFunc: func(t testing.TB, _ *tests.TestApp, res *http.Response) {
				if ct := res.Header.Get("Content-Type"); ct != "text/csv; charset=utf-8" ||
					!strings.Contains(res.Header.Get("Content-Disposition"), `filename="alice-site-submissions.csv"`) {
					t.Fatalf("headers %v", res.Header)
				}
			},
		},
		{
			Name:            "unknown format",
			Method:          http.MethodGet,
			URL:             "/submissions/" + idAliceSite + "?format=xml",
			Headers:         bearer(keyAlice),
			ExpectedStatus:  400,
			ExpectedContent: []string{errBody("format must be json or csv")},
			TestAppFactory:  newAppWithSubmissions,
		},
		{
			Name:            "delete a submission of another deployment is 404",
			Method:          http.MethodDelete,
			URL:             "/submissions/" + idAliceSite + "/nosuchsubmissio",
			Headers:         bearer(keyAlice),
			ExpectedStatus:  404,
			ExpectedContent: []string{errBody("Submission not found")},
			TestAppFactory:  newAppWithSubmissions,
		},
	})
}

func TestSubmissionsCSVAndDelete(t *testing.T) {
	t.Parallel()
	app := newAppWithSubmissions(t)
	defer app.Cleanup()
	mux := newMux(t, app)
	res, body := do(t, mux, http.MethodGet, "/submissions/"+idAliceSite+"?format=csv", "", bearer(keyAlice))
	if res.StatusCode != 200 {
		t.Fatal(res.StatusCode)
	}
	rows, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil || len(rows) != 4 {
		t.Fatalf("csv %v %q", err, body)
	}
	// columns id,created_at,@SUM(1),email,n,name; newest first; formulas
	// made inert, in names and in values (also after white space)
	if rows[0][2] != "'@SUM(1)" || rows[1][2] != "' =1+1" || rows[1][5] != `'=HYPERLINK("x")` || rows[1][4] != "3" ||
		rows[2][3] != "b@example.com" || rows[3][5] != "first" {
		t.Fatalf("rows %q", rows)
	}

	subs, _ := app.FindRecordsByFilter(forms.SubmissionsCollection, "deployment = {:d}", "created", 0, 0, dbx.Params{"d": idAliceSite})
	bobSubs, _ := app.FindRecordsByFilter(forms.SubmissionsCollection, "deployment = {:d}", "", 0, 0, dbx.Params{"d": idBobSite})
	if res, _ := do(t, mux, http.MethodDelete, fmt.Sprintf("/submissions/%s/%s", idAliceSite, bobSubs[0].Id), "", bearer(keyAlice)); res.StatusCode != 404 {
		t.Fatalf("deleting a submission through another deployment: %d", res.StatusCode)
	}
	res, body = do(t, mux, http.MethodDelete, fmt.Sprintf("/submissions/%s/%s", idAliceSite, subs[0].Id), "", bearer(keyAlice))
	if res.StatusCode != 200 || !strings.Contains(body, "Submission deleted") {
		t.Fatalf("delete: %d %s", res.StatusCode, body)
	}
	if countSubs(t, app, idAliceSite) != 2 || countSubs(t, app, idBobSite) != 1 {
		t.Fatal("wrong submissions deleted")
	}
}
