package hooks

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tests"

	"sitedrop/sites/abuse"
)

// postReport sends a report from the client ip to mux: JSON, or a form
// when form is set (as the /report page posts it).
func postReport(t testing.TB, mux http.Handler, ip, body string, form bool, headers map[string]string) (*http.Response, string) {
	t.Helper()
	ctype := "application/json"
	if form {
		ctype = "application/x-www-form-urlencoded"
	}
	req := newRequest(http.MethodPost, "/report", body, withHeaders(map[string]string{"Content-Type": ctype}, headers))
	req.RemoteAddr = ip + ":40000"
	res := roundTrip(t, mux, req)
	b := new(strings.Builder)
	if res.Body != nil {
		buf := make([]byte, 64<<10)
		n, _ := res.Body.Read(buf)
		b.Write(buf[:n])
	}
	return res, b.String()
}

// reportJSON is a report's JSON body.
func reportJSON(u, reason, details, email string) string {
	b, _ := json.Marshal(map[string]string{"url": u, "reason": reason, "details": details, "email": email})
	return string(b)
}

// TestReportNamesTheSite: a report of a slug host, a preview host (a
// version's and an alias'), a verified custom domain (and its www
// redirect) and a renamed site's old host each names the deployment
// served there, stored open with the reporter's address.
func TestReportNamesTheSite(t *testing.T) {
	t.Parallel()
	app, sd := newFixtureApp(t)
	defer app.Cleanup()
	mux := newMux(t, app)
	mustDomain(t, app, idBobSite, "bob.example", true)
	mustDomain(t, app, idBobSite, "www.bob.example", true)
	mustDomain(t, app, idAliceSite, "pending.example", false) // claimed, not verified: serves nothing

	cases := []struct {
		url, dep, slug, host string
	}{
		{"https://alice-site.sites.test/login.html", idAliceSite, "alice-site", "alice-site.sites.test"},
		{"alice-site.sites.test", idAliceSite, "alice-site", "alice-site.sites.test"}, // no scheme: https
		{"http://v1--alice-site.sites.test/", idAliceSite, "alice-site", "v1--alice-site.sites.test"},
		{"https://staging--alice-site.sites.test/x", idAliceSite, "alice-site", "staging--alice-site.sites.test"},
		{"https://BOB.example:443/pay?x=1", idBobSite, "bob-site", "bob.example"},
		{"https://www.bob.example/", idBobSite, "bob-site", "www.bob.example"},
	}
	for i, c := range cases {
		ip := "192.0.2." + string(rune('1'+i))
		res, body := postReport(t, mux, ip, reportJSON(c.url, "phishing", "asks for bank passwords", "me@example.org"), false, nil)
		if res.StatusCode != http.StatusCreated {
			t.Fatalf("%s: %d %s", c.url, res.StatusCode, body)
		}
		var ans struct{ ID, Message string }
		if err := json.Unmarshal([]byte(body), &ans); err != nil || ans.Message != msgReportReceived {
			t.Fatalf("%s: answer %s", c.url, body)
		}
		rep, err := sd.reports.Find(ans.ID)
		if err != nil {
			t.Fatal(err)
		}
		if rep.DeploymentID() != c.dep || rep.Slug() != c.slug || rep.Host() != c.host || rep.Status() != abuse.StatusOpen ||
			rep.Reason() != "phishing" || rep.IP() != ip || rep.Email() != "me@example.org" || rep.URL() != c.url {
			t.Errorf("%s: stored %v", c.url, rep.FieldsData())
		}
	}

	// the same report again from the same client is the same report
	again := reportJSON(cases[0].url, "phishing", "asks for bank passwords", "me@example.org")
	before := countReports(t, app)
	res1, body1 := postReport(t, mux, "192.0.2.1", again, false, nil)
	_, body2 := postReport(t, mux, "192.0.2.1", again, false, nil)
	if res1.StatusCode != http.StatusCreated || body1 != body2 || countReports(t, app) != before {
		t.Fatalf("sent again: %d %s, %s; %d reports, want %d", res1.StatusCode, body1, body2, countReports(t, app), before)
	}
	if res, _ := postReport(t, mux, "192.0.2.99", again, false, nil); res.StatusCode != http.StatusCreated || countReports(t, app) != before+1 {
		t.Fatalf("another client's report: %d, %d reports", res.StatusCode, countReports(t, app))
	}

	// a renamed site's old host names it while it redirects
	if _, err := sd.svc.Rename(context.Background(), mustRecord(t, app, idAliceSite), "alice-renamed"); err != nil {
		t.Fatal(err)
	}
	res, body := postReport(t, mux, "192.0.2.50", reportJSON("https://alice-site.sites.test/", "malware", "", ""), false, nil)
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("old slug: %d %s", res.StatusCode, body)
	}
	open, err := sd.reports.List(abuse.Filter{DeploymentID: idAliceSite, Limit: 1})
	if err != nil || len(open) != 1 || open[0].Slug() != "alice-renamed" || open[0].Reason() != "malware" {
		t.Fatalf("old slug's report: %v %v", open, err)
	}

	// what no site here serves is a 400 that stores nothing
	before = countReports(t, app)
	for i, u := range []string{
		"https://nobody-here.sites.test/", // no such site
		"https://pending.example/",        // a domain not verified
		"https://web.test/account",        // the web host
		"https://example.com/",            // elsewhere
		"https://a.b.sites.test/",         // nested labels
		"ftp://alice-renamed.sites.test/", // not the web
		"https://[::1]/",                  // an address
	} {
		res, body := postReport(t, mux, "198.51.100."+string(rune('1'+i)), reportJSON(u, "spam", "", ""), false, nil)
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(body, `"error"`) {
			t.Errorf("%s: %d %s", u, res.StatusCode, body)
		}
	}
	if n := countReports(t, app); n != before {
		t.Errorf("refused reports stored: %d, want %d", n, before)
	}
}

// mustRecord loads a deployment's record.
func mustRecord(t testing.TB, app core.App, id string) *core.Record {
	t.Helper()
	rec, err := app.FindRecordById("deployments", id)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// countReports is how many reports are stored.
func countReports(t testing.TB, app core.App) int64 {
	t.Helper()
	n, err := app.CountRecords(abuse.Collection)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestReportLimits: every field is bounded and every refusal is a clear
// 4xx {"error"} that stores nothing; a client sends at most
// reportsPerHour reports an hour; a browser page of another origin
// cannot make its visitors report.
func TestReportLimits(t *testing.T) {
	t.Parallel()
	site := "https://alice-site.sites.test/"
	scenarios := []tests.ApiScenario{
		{Name: "reason not in the list", Method: http.MethodPost, URL: "/report",
			Body: strings.NewReader(reportJSON(site, "ugly", "", "")), Headers: map[string]string{"Content-Type": "application/json"},
			ExpectedStatus: 400, ExpectedContent: []string{`"error":"reason must be one of phishing, malware, spam, illegal, copyright, other"`}},
		{Name: "no reason", Method: http.MethodPost, URL: "/report",
			Body: strings.NewReader(`{"url":"` + site + `"}`), Headers: map[string]string{"Content-Type": "application/json"},
			ExpectedStatus: 400, ExpectedContent: []string{`"error":"reason is required: one of phishing, malware, spam, illegal, copyright, other"`}},
		{Name: "no url", Method: http.MethodPost, URL: "/report",
			Body: strings.NewReader(`{"reason":"spam"}`), Headers: map[string]string{"Content-Type": "application/json"},
			ExpectedStatus: 400, ExpectedContent: []string{`"error":"url is required: the address of the site you report"`}},
		{Name: "details of 2,001 characters", Method: http.MethodPost, URL: "/report",
			Body: strings.NewReader(reportJSON(site, "spam", strings.Repeat("é", abuse.MaxDetails+1), "")), Headers: map[string]string{"Content-Type": "application/json"},
			ExpectedStatus: 400, ExpectedContent: []string{`"error":"details are too long (at most 2000 characters)"`}},
		{Name: "details of 2,000 characters", Method: http.MethodPost, URL: "/report",
			Body: strings.NewReader(reportJSON(site, "spam", strings.Repeat("é", abuse.MaxDetails), "")), Headers: map[string]string{"Content-Type": "application/json"},
			ExpectedStatus: 201, ExpectedContent: []string{`"message":"Report received"`}},
		{Name: "url over 2,048 bytes", Method: http.MethodPost, URL: "/report",
			Body: strings.NewReader(reportJSON(site+strings.Repeat("a", abuse.MaxURL), "spam", "", "")), Headers: map[string]string{"Content-Type": "application/json"},
			ExpectedStatus: 400, ExpectedContent: []string{`"error":"url is too long (at most 2048 bytes)"`}},
		{Name: "not an e-mail address", Method: http.MethodPost, URL: "/report",
			Body: strings.NewReader(reportJSON(site, "spam", "", "not-an-address")), Headers: map[string]string{"Content-Type": "application/json"},
			ExpectedStatus: 400, ExpectedContent: []string{`"error":"email must be an e-mail address, or left out"`}},
		{Name: "an unknown field", Method: http.MethodPost, URL: "/report",
			Body: strings.NewReader(`{"url":"` + site + `","reason":"spam","x":1}`), Headers: map[string]string{"Content-Type": "application/json"},
			ExpectedStatus: 201, ExpectedContent: []string{`"id":`}},
		{Name: "malformed JSON", Method: http.MethodPost, URL: "/report",
			Body: strings.NewReader(`{"url":`), Headers: map[string]string{"Content-Type": "application/json"},
			ExpectedStatus: 400, ExpectedContent: []string{`"error":`}},
		{Name: "JSON sent as text", Method: http.MethodPost, URL: "/report",
			Body: strings.NewReader(reportJSON(site, "spam", "", "")), Headers: map[string]string{"Content-Type": "text/plain"},
			ExpectedStatus: 201, ExpectedContent: []string{`"message":"Report received"`}},
		{Name: "JSON sent as a form (curl -d)", Method: http.MethodPost, URL: "/report",
			Body: strings.NewReader(" " + reportJSON(site, "spam", "", "")), Headers: map[string]string{"Content-Type": "application/x-www-form-urlencoded"},
			ExpectedStatus: 201, ExpectedContent: []string{`"message":"Report received"`}},
		{Name: "neither JSON nor a form", Method: http.MethodPost, URL: "/report",
			Body: strings.NewReader(site), Headers: map[string]string{"Content-Type": "text/plain"},
			ExpectedStatus: 400, ExpectedContent: []string{`"error":`}},
		{Name: "a malformed form", Method: http.MethodPost, URL: "/report",
			Body: strings.NewReader("url=%zz&reason=spam"), Headers: map[string]string{"Content-Type": "application/x-www-form-urlencoded"},
			ExpectedStatus: 400, ExpectedContent: []string{"Malformed form body"}},
		{Name: "a body over the limit", Method: http.MethodPost, URL: "/report",
			Body: strings.NewReader(reportJSON(site, "spam", strings.Repeat("a", reportBodyLimit), "")), Headers: map[string]string{"Content-Type": "application/json"},
			ExpectedStatus: 413, ExpectedContent: []string{`"error":`}},
		{Name: "a form posted from another site's page", Method: http.MethodPost, URL: "/report",
			Body:           strings.NewReader("url=" + url.QueryEscape(site) + "&reason=spam"),
			Headers:        map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"},
			ExpectedStatus: 403, ExpectedContent: []string{`"error":"` + msgReportCrossOrigin + `"`}},
	}
	for i := range scenarios {
		scenarios[i].TestAppFactory = func(t testing.TB) *tests.TestApp {
			app, _ := newFixtureApp(t)
			return app
		}
		scenarios[i].AfterTestFunc = func(t testing.TB, app *tests.TestApp, res *http.Response) {
			want := int64(0)
			if res.StatusCode == http.StatusCreated {
				want = 1
			}
			if n := countReports(t, app); n != want {
				t.Errorf("%d reports stored, want %d", n, want)
			}
		}
	}
	runScenarios(t, scenarios)
}

// TestReportRateLimit: a client (an IPv4 address) files at most
// reportsPerHour reports an hour; the next is a 429 with Retry-After
// that stores nothing, and another client is not held back.
func TestReportRateLimit(t *testing.T) {
	t.Parallel()
	app, _ := newFixtureApp(t)
	defer app.Cleanup()
	mux := newMux(t, app)
	body := reportJSON("https://alice-site.sites.test/", "spam", "", "")
	for i := range reportsPerHour {
		page := reportJSON("https://alice-site.sites.test/"+strconv.Itoa(i), "spam", "", "") // ten reports, not one sent again
		if res, b := postReport(t, mux, "203.0.113.7", page, false, nil); res.StatusCode != http.StatusCreated {
			t.Fatalf("report %d: %d %s", i+1, res.StatusCode, b)
		}
	}
	res, b := postReport(t, mux, "203.0.113.7", body, false, nil)
	if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" || !strings.Contains(b, `"error":"`+msgRateLimited+`"`) {
		t.Fatalf("over the limit: %d %q %s", res.StatusCode, res.Header.Get("Retry-After"), b)
	}
	if n := countReports(t, app); n != reportsPerHour {
		t.Errorf("%d reports stored, want %d", n, reportsPerHour)
	}
	if res, b := postReport(t, mux, "203.0.113.8", body, false, nil); res.StatusCode != http.StatusCreated {
		t.Fatalf("another client: %d %s", res.StatusCode, b)
	}
}

// TestReportPage: the public /report page shows the form (its address
// prefilled from ?url=); its post answers 303 to the thank-you, and a
// refused post shows the form again with the values and the error, in
// the API's status.
func TestReportPage(t *testing.T) {
	t.Parallel()
	app, sd := newFixtureApp(t)
	defer app.Cleanup()
	mux := newMux(t, app)

	res, body := do(t, mux, http.MethodGet, "/report?url="+url.QueryEscape("https://alice-site.sites.test/x"), "", nil)
	if res.StatusCode != 200 || !strings.Contains(body, `data-testid="report-form"`) ||
		!strings.Contains(body, `value="https://alice-site.sites.test/x"`) || !strings.Contains(body, `<option value="phishing"`) {
		t.Fatalf("report page: %d %s", res.StatusCode, body)
	}

	form := url.Values{"url": {"https://alice-site.sites.test/x"}, "reason": {"phishing"}, "details": {"fake bank"}}
	res, body = postReport(t, mux, "192.0.2.9", form.Encode(), true, map[string]string{"Accept": "text/html", "Sec-Fetch-Site": "same-origin"})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/report?sent=1" {
		t.Fatalf("form post: %d %q %s", res.StatusCode, res.Header.Get("Location"), body)
	}
	reps, err := sd.reports.List(abuse.Filter{Status: abuse.StatusOpen})
	if err != nil || len(reps) != 1 || reps[0].Details() != "fake bank" || reps[0].DeploymentID() != idAliceSite {
		t.Fatalf("stored: %v %v", reps, err)
	}
	res, body = do(t, mux, http.MethodGet, "/report?sent=1", "", nil)
	if res.StatusCode != 200 || !strings.Contains(body, `data-testid="report-sent"`) {
		t.Fatalf("thank-you: %d %s", res.StatusCode, body)
	}

	form.Set("url", "https://nobody-here.sites.test/")
	form.Set("details", "<b>kept</b>")
	res, body = postReport(t, mux, "192.0.2.9", form.Encode(), true, map[string]string{"Accept": "text/html"})
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(body, `data-testid="report-error"`) ||
		!strings.Contains(body, "This URL is not a site hosted here") ||
		!strings.Contains(body, `value="https://nobody-here.sites.test/"`) || !strings.Contains(body, "&lt;b&gt;kept&lt;/b&gt;</textarea>") ||
		!strings.Contains(body, `<option value="phishing" selected`) {
		t.Fatalf("refused form post: %d %s", res.StatusCode, body)
	}
	if n := countReports(t, app); n != 1 {
		t.Errorf("%d reports stored, want 1", n)
	}
}
