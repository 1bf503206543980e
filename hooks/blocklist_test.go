package hooks

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tests"

	"sitedrop/sites"
	"sitedrop/sites/store"
)

// The phishing kit of the blocklist tests: its page, blocked by hash.
const kitPage = "<form>your bank password: <input name=p></form>"

// withBlocks is a fixture app whose blocklist holds, added through the
// service as the admin API adds them, the blocks given as kind, value
// pairs.
func withBlocks(kv ...string) func(t testing.TB) *tests.TestApp {
	return func(t testing.TB) *tests.TestApp {
		app, sd := newFixtureApp(t)
		for i := 0; i+1 < len(kv); i += 2 {
			if _, err := sd.blocks.Add(t.Context(), kv[i], kv[i+1], "test", nil); err != nil {
				t.Fatal(err)
			}
		}
		return app
	}
}

// noNewSite fails when a refused deploy left the deployment slug behind.
func noNewSite(slug string) func(t testing.TB, app *tests.TestApp, res *http.Response) {
	return func(t testing.TB, app *tests.TestApp, res *http.Response) {
		t.Helper()
		if _, err := sites.FindDeploymentBySlug(app, slug); err == nil {
			t.Fatalf("the refused deploy made %s", slug)
		}
	}
}

// TestBlockedContentRefused: a blocked content hash refuses, with 403
// and the file named, every way content reaches the server: a JSON
// deploy (anonymous and keyed, html and files), an update, a zip, an
// upload by digest and the question that precedes one. Nothing is
// stored.
func TestBlockedContentRefused(t *testing.T) {
	kit := store.HashBytes([]byte(kitPage))
	blocked := withBlocks(sites.BlockContentHash, strings.ToUpper(kit))
	jsonHeaders := func(h map[string]string) map[string]string {
		return withHeaders(h, map[string]string{"Content-Type": "application/json"})
	}
	htmlBody := func(slug, page string) *strings.Reader {
		b, _ := json.Marshal(map[string]string{"slug": slug, "html": page})
		return strings.NewReader(string(b))
	}
	runScenarios(t, []tests.ApiScenario{
		{
			Name:            "anonymous html deploy",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Headers:         jsonHeaders(nil),
			Body:            htmlBody("kit-anon", kitPage),
			ExpectedStatus:  403,
			ExpectedContent: []string{errBody("Content blocked: index.html is on this server's blocklist")},
			TestAppFactory:  blocked,
			AfterTestFunc:   noNewSite("kit-anon"),
		},
		{
			Name:    "keyed files deploy names the file",
			Method:  http.MethodPost,
			URL:     "/deploy",
			Headers: jsonHeaders(bearer(keyAlice)),
			Body: strings.NewReader(`{"slug":"kit-files","files":[{"path":"index.html","content":"<p>hello</p>"},` +
				`{"path":"secure/login.html","content":` + fmt.Sprintf("%q", kitPage) + `}]}`),
			ExpectedStatus:  403,
			ExpectedContent: []string{errBody("Content blocked: secure/login.html is on this server's blocklist")},
			TestAppFactory:  blocked,
			AfterTestFunc:   noNewSite("kit-files"),
		},
		{
			// the page as stored differs from the page as sent (a title
			// is added to its head): the bytes sent are what is blocked
			Name:            "a page changed at deploy is still found",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Headers:         jsonHeaders(bearer(keyAlice)),
			Body:            strings.NewReader(`{"slug":"kit-title","title":"Bank","html":` + fmt.Sprintf("%q", kitPage) + `}`),
			ExpectedStatus:  403,
			ExpectedContent: []string{errBody("Content blocked: index.html is on this server's blocklist")},
			TestAppFactory:  blocked,
			AfterTestFunc:   noNewSite("kit-title"),
		},
		{
			Name:            "an update keeps the site as it was",
			Method:          http.MethodPut,
			URL:             "/deploy/" + idAliceSite,
			Headers:         jsonHeaders(bearer(keyAlice)),
			Body:            strings.NewReader(`{"html":` + fmt.Sprintf("%q", kitPage) + `}`),
			ExpectedStatus:  403,
			ExpectedContent: []string{errBody("Content blocked: index.html is on this server's blocklist")},
			TestAppFactory:  blocked,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, res *http.Response) {
				if code, b := siteGet(t, app, "alice-site.sites.test", "/"); code != 200 || strings.Contains(b, "bank password") {
					t.Fatalf("alice-site after the refused update: %d %q", code, b)
				}
			},
		},
		{
			Name:            "zip deploy",
			Method:          http.MethodPost,
			URL:             "/deploy?slug=kit-zip",
			Headers:         withHeaders(bearer(keyPia), map[string]string{"Content-Type": "application/zip"}),
			Body:            zipOf(t, "site/index.html", "<p>fine</p>", "site/verify/index.html", kitPage),
			ExpectedStatus:  403,
			ExpectedContent: []string{errBody("Content blocked: verify/index.html is on this server's blocklist")},
			TestAppFactory:  blocked,
			AfterTestFunc:   noNewSite("kit-zip"),
		},
		{
			Name:            "upload by digest, refused before its body is stored",
			Method:          http.MethodPut,
			URL:             "/blobs/" + kit,
			Headers:         bearer(keyAlice),
			Body:            strings.NewReader(kitPage),
			ExpectedStatus:  403,
			ExpectedContent: []string{errBody("Content blocked: sha256 " + kit + " is on this server's blocklist")},
			TestAppFactory:  blocked,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, res *http.Response) {
				if ok, _ := stateOf(t, app).svc.Store().Has(t.Context(), kit); ok {
					t.Fatal("the blocked upload was stored")
				}
			},
		},
		{
			Name:            "the question before an upload",
			Method:          http.MethodPost,
			URL:             "/blobs/missing",
			Headers:         bearer(keyAlice),
			Body:            strings.NewReader(`{"hashes":["` + store.HashBytes([]byte("other")) + `","` + strings.ToUpper(kit) + `"]}`),
			ExpectedStatus:  403,
			ExpectedContent: []string{errBody("Content blocked: sha256 " + kit + " is on this server's blocklist")},
			TestAppFactory:  blocked,
		},
		{
			// content stored before it was blocked, named by its digest
			Name:            "a deploy naming the content by sha256",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Headers:         jsonHeaders(bearer(keyAlice)),
			Body:            strings.NewReader(`{"slug":"kit-digest","files":[{"path":"index.html","sha256":"` + kit + `"}]}`),
			ExpectedStatus:  403,
			ExpectedContent: []string{errBody("Content blocked: index.html is on this server's blocklist")},
			TestAppFactory: func(t testing.TB) *tests.TestApp {
				app := blocked(t)
				if err := stateOf(t, app).svc.Store().Put(t.Context(), kit, []byte(kitPage)); err != nil {
					t.Fatal(err)
				}
				return app
			},
			AfterTestFunc: noNewSite("kit-digest"),
		},
		{
			Name:            "other content deploys as before",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Headers:         jsonHeaders(nil),
			Body:            htmlBody("not-a-kit", "<p>hello</p>"),
			ExpectedStatus:  200,
			ExpectedContent: []string{`"slug":"not-a-kit"`},
			TestAppFactory:  blocked,
		},
	})
}

// TestBlockedRedirectTarget: a _redirects rule pointing at a blocked host
// or URL refuses the deploy with 403 naming the line; rules elsewhere,
// and paths of the site itself, deploy.
func TestBlockedRedirectTarget(t *testing.T) {
	blocked := withBlocks(sites.BlockRedirectTarget, "evil.example", sites.BlockRedirectTarget, "https://Share.Example/phish")
	deploy := func(slug, redirects string) *strings.Reader {
		b, _ := json.Marshal(map[string]any{"slug": slug, "files": []map[string]string{
			{"path": "index.html", "content": "<p>hi</p>"},
			{"path": "_redirects", "content": redirects},
		}})
		return strings.NewReader(string(b))
	}
	headers := withHeaders(bearer(keyAlice), map[string]string{"Content-Type": "application/json"})
	runScenarios(t, []tests.ApiScenario{
		{
			Name:            "a subdomain of a blocked host",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Headers:         headers,
			Body:            deploy("to-evil", "/about /about.html 200\n/login https://login.EVIL.example:8443/x 302\n"),
			ExpectedStatus:  403,
			ExpectedContent: []string{errBody("Redirect target blocked: _redirects line 2 points to https://login.EVIL.example:8443/x, which this server blocks")},
			TestAppFactory:  blocked,
			AfterTestFunc:   noNewSite("to-evil"),
		},
		{
			Name:            "a rule to a blocked URL prefix",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Headers:         headers,
			Body:            deploy("to-phish", "/go/* https://share.example/phish/:splat 302\n"),
			ExpectedStatus:  403,
			ExpectedContent: []string{`Redirect target blocked: _redirects line 1`},
			TestAppFactory:  blocked,
			AfterTestFunc:   noNewSite("to-phish"),
		},
		{
			Name:            "elsewhere on a host with a blocked prefix, and look-alike hosts, deploy",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Headers:         headers,
			Body:            deploy("to-fine", "/a https://share.example/docs 301\n/b https://notevil.example/ 301\n/c /evil.example 301\n"),
			ExpectedStatus:  200,
			ExpectedContent: []string{`"slug":"to-fine"`},
			TestAppFactory:  blocked,
		},
	})
}

// TestBlockedSignupDomain: an address at (or under) a blocked e-mail
// domain gets a code like any other, but its first sign-in makes no
// account: 403. An account that exists keeps signing in. (Three sign-ins:
// the limit of codes a minute from one address.)
func TestBlockedSignupDomain(t *testing.T) {
	t.Parallel()
	app, sd := newFixtureApp(t)
	defer app.Cleanup()
	mustUser(t, app, "old@spam.example", sites.PlanFree, fixtureKey("old"))
	if _, err := sd.blocks.Add(t.Context(), sites.BlockEmailDomain, "@Spam.Example", "throwaway addresses", nil); err != nil {
		t.Fatal(err)
	}
	mux := newMux(t, app)
	signIn := func(email string) (*http.Response, string) {
		t.Helper()
		res, body := do(t, mux, http.MethodPost, "/auth/otp", `{"email":"`+email+`"}`, nil)
		if res.StatusCode != 200 {
			t.Fatalf("otp for %s: %d %s", email, res.StatusCode, body)
		}
		var otp struct {
			ID string `json:"otp_id"`
		}
		if err := json.Unmarshal([]byte(body), &otp); err != nil {
			t.Fatal(err)
		}
		return do(t, mux, http.MethodPost, "/auth/verify", fmt.Sprintf(`{"otp_id":%q,"code":%q}`, otp.ID, codeFromMail(t, app)), nil)
	}
	for _, email := range []string{"new@spam.example", "new@mx.spam.example"} {
		res, body := signIn(email)
		body = strings.TrimSpace(body)
		if res.StatusCode != 403 || body != errBody("Sign-up from "+strings.SplitN(email, "@", 2)[1]+" addresses is not allowed on this server") {
			t.Fatalf("sign-up of %s: %d %s", email, res.StatusCode, body)
		}
		if _, err := app.FindAuthRecordByEmail("users", email); err == nil {
			t.Fatalf("an account was made for %s", email)
		}
	}
	if res, body := signIn("old@spam.example"); res.StatusCode != 200 {
		t.Fatalf("the existing account: %d %s", res.StatusCode, body)
	}
}

// TestBlocklistAdminAPI: superusers list, add and remove blocks; a block
// applies to the next request and its removal too, without a restart;
// every refusal is a clear 4xx that changes nothing.
func TestBlocklistAdminAPI(t *testing.T) {
	t.Parallel()
	app, _ := newFixtureApp(t)
	defer app.Cleanup()
	admin := bearer(superuserToken(t, app))
	mux := newMux(t, app)
	kit := store.HashBytes([]byte(kitPage))
	deployKit := func(slug string) (*http.Response, string) {
		return do(t, mux, http.MethodPost, "/deploy", `{"slug":"`+slug+`","html":`+fmt.Sprintf("%q", kitPage)+`}`, bearer(keyPia))
	}

	// refusals first: nothing is added
	for _, c := range []struct {
		name, method, url, body string
		headers                 map[string]string
		status                  int
		msg                     string
	}{
		{"no token", "POST", "/admin/blocklist", `{"kind":"content_hash","value":"` + kit + `"}`, nil, 401, ""},
		{"a user's key", "POST", "/admin/blocklist", `{"kind":"content_hash","value":"` + kit + `"}`, bearer(keyAlice), 401, ""},
		{"a user's key lists nothing", "GET", "/admin/blocklist", "", bearer(keyAlice), 401, ""},
		{"no kind", "POST", "/admin/blocklist", `{"value":"x"}`, admin, 400, errBody("kind is required")},
		{"no value", "POST", "/admin/blocklist", `{"kind":"email_domain"}`, admin, 400, errBody("value is required")},
		{"unknown kind", "POST", "/admin/blocklist", `{"kind":"ip","value":"x"}`, admin, 400, errBody("kind must be one of content_hash, redirect_target, email_domain")},
		{"bad hash", "POST", "/admin/blocklist", `{"kind":"content_hash","value":"abc"}`, admin, 400, errBody(`value: invalid sha256 "abc" (64 hex digits)`)},
		{"bad pattern", "POST", "/admin/blocklist", `{"kind":"redirect_target","value":"ftp://x"}`, admin, 400, ""},
		{"bad domain", "POST", "/admin/blocklist", `{"kind":"email_domain","value":"not a domain"}`, admin, 400, ""},
		{"long note", "POST", "/admin/blocklist", `{"kind":"email_domain","value":"a.example","note":"` + strings.Repeat("n", 501) + `"}`, admin, 400, errBody("note is too long: at most 500 bytes")},
		{"unknown id", "DELETE", "/admin/blocklist/nosuchblock0000", "", admin, 404, errBody(msgBlockNotFound)},
		{"list of an unknown kind", "GET", "/admin/blocklist?kind=ip", "", admin, 400, ""},
	} {
		res, body := do(t, mux, c.method, c.url, c.body, c.headers)
		body = strings.TrimSpace(body)
		if res.StatusCode != c.status || !strings.HasPrefix(body, `{"error":"`) || c.msg != "" && body != c.msg {
			t.Errorf("%s: %d %s", c.name, res.StatusCode, body)
		}
	}
	if n, _ := app.CountRecords(sites.BlocklistCollection); n != 0 {
		t.Fatalf("refusals added %d blocks", n)
	}

	if res, body := deployKit("kit-before"); res.StatusCode != 200 {
		t.Fatalf("deploy before the block: %d %s", res.StatusCode, body)
	}
	res, body := do(t, mux, "POST", "/admin/blocklist", `{"kind":"content_hash","value":"`+strings.ToUpper(kit)+`","note":"phishing kit, report 12"}`, admin)
	if res.StatusCode != 200 {
		t.Fatalf("add: %d %s", res.StatusCode, body)
	}
	var added struct {
		ID, Kind, Value, Note string
		CreatedBy             string `json:"created_by"`
	}
	if err := json.Unmarshal([]byte(body), &added); err != nil {
		t.Fatal(err)
	}
	if added.Kind != "content_hash" || added.Value != kit || added.Note != "phishing kit, report 12" || added.CreatedBy == "" {
		t.Fatalf("added %+v", added)
	}
	if res, body := do(t, mux, "POST", "/admin/blocklist", `{"kind":"content_hash","value":"`+kit+`"}`, admin); res.StatusCode != 409 || strings.TrimSpace(body) != errBody(msgAlreadyBlocked) {
		t.Fatalf("the same again: %d %s", res.StatusCode, body)
	}
	if res, body := deployKit("kit-after"); res.StatusCode != 403 {
		t.Fatalf("deploy after the block: %d %s", res.StatusCode, body)
	}
	res, body = do(t, mux, "GET", "/admin/blocklist?kind=content_hash", "", admin)
	if res.StatusCode != 200 || !strings.Contains(body, `"id":"`+added.ID+`"`) {
		t.Fatalf("list: %d %s", res.StatusCode, body)
	}
	if res, body := do(t, mux, "GET", "/admin/blocklist?kind=email_domain", "", admin); strings.TrimSpace(body) != `{"blocks":[]}` {
		t.Fatalf("list of another kind: %d %s", res.StatusCode, body)
	}
	if res, body := do(t, mux, "DELETE", "/admin/blocklist/"+added.ID, "", admin); res.StatusCode != 200 {
		t.Fatalf("remove: %d %s", res.StatusCode, body)
	}
	if res, body := deployKit("kit-lifted"); res.StatusCode != 200 {
		t.Fatalf("deploy after the block was lifted: %d %s", res.StatusCode, body)
	}
}

// TestBlocklistDashboardAPI: a block created through PocketBase's records
// API, as the dashboard creates it, is normalised and names the
// superuser who made it.
func TestBlocklistDashboardAPI(t *testing.T) {
	headers := map[string]string{"Content-Type": "application/json"} // the token, once the app has its superuser
	runScenarios(t, []tests.ApiScenario{{
		Name:    "create in the dashboard",
		Method:  http.MethodPost,
		URL:     "/api/collections/" + sites.BlocklistCollection + "/records",
		Body:    strings.NewReader(`{"kind":"email_domain","value":"@Throwaway.Example","note":"spam wave"}`),
		Headers: headers,
		TestAppFactory: func(t testing.TB) *tests.TestApp {
			app, _ := newFixtureApp(t)
			headers["Authorization"] = superuserToken(t, app)
			return app
		},
		ExpectedStatus:  200,
		ExpectedContent: []string{`"value":"throwaway.example"`},
		AfterTestFunc: func(t testing.TB, app *tests.TestApp, res *http.Response) {
			rec, err := app.FindFirstRecordByData(sites.BlocklistCollection, sites.FieldBlockValue, "throwaway.example")
			if err != nil {
				t.Fatal(err)
			}
			su, err := app.FindAuthRecordByEmail(core.CollectionNameSuperusers, "admin@example.com")
			if err != nil || sites.BlockOf(rec).CreatedBy() != su.Email() {
				t.Fatalf("created_by %q, want the superuser", sites.BlockOf(rec).CreatedBy())
			}
			if err := stateOf(t, app).blocks.CheckSignup("a@throwaway.example"); err == nil {
				t.Fatal("the dashboard's block does not apply")
			}
		},
	}})
}

// TestBlocklistDashboardEdits: a block saved as the dashboard saves it
// (a record, outside the admin API) is checked and normalised by the
// record hooks, and applies at once.
func TestBlocklistDashboardEdits(t *testing.T) {
	t.Parallel()
	app, sd := newFixtureApp(t)
	defer app.Cleanup()
	col, err := app.FindCollectionByNameOrId(sites.BlocklistCollection)
	if err != nil {
		t.Fatal(err)
	}
	bad := core.NewRecord(col)
	bad.Set(sites.FieldBlockKind, sites.BlockContentHash)
	bad.Set(sites.FieldBlockValue, "not-a-hash")
	if err := app.Save(bad); err == nil || !strings.Contains(err.Error(), "invalid sha256") {
		t.Fatalf("a malformed hash saved: %v", err)
	}
	rec := core.NewRecord(col)
	rec.Set(sites.FieldBlockKind, sites.BlockRedirectTarget)
	rec.Set(sites.FieldBlockValue, "HTTPS://Evil.Example/")
	if err := app.Save(rec); err != nil {
		t.Fatal(err)
	}
	if v := rec.GetString(sites.FieldBlockValue); v != "evil.example" {
		t.Fatalf("stored %q, want evil.example", v)
	}
	if !sd.blocks.TargetBlocked("https://www.evil.example/login") {
		t.Fatal("the dashboard's block does not apply")
	}
	if err := app.Delete(rec); err != nil {
		t.Fatal(err)
	}
	if sd.blocks.TargetBlocked("https://www.evil.example/login") {
		t.Fatal("the block deleted in the dashboard still applies")
	}
}

// TestBlockSiteContent: blocking a site's content (the moderation page's
// action) blocks its pages as they were sent, so the same kit cannot be
// deployed again under another slug, while its other files stay free.
func TestBlockSiteContent(t *testing.T) {
	t.Parallel()
	app, sd := newFixtureApp(t)
	defer app.Cleanup()
	title := "Your bank" // the stored page differs from the page sent: a title is added
	files := []sites.File{
		{Path: "index.html", ContentType: "text/html; charset=utf-8", Data: []byte(kitPage)},
		{Path: "style.css", ContentType: "text/css; charset=utf-8", Data: []byte("body{color:red}")},
	}
	c, err := sd.svc.Create(t.Context(), sites.CreateParams{Slug: "first-kit", AnonTTL: time.Hour,
		Meta: sites.Metadata{Title: &title}, Upload: sites.Upload{StorageType: sites.StorageFiles, Files: files}})
	if err != nil {
		t.Fatal(err)
	}
	added, err := sd.blocks.BlockSiteContent(t.Context(), c.Record, "phishing, report 7", nil)
	if err != nil || len(added) != 1 || added[0].Value() != store.HashBytes([]byte(kitPage)) || added[0].Note() != "phishing, report 7 (first-kit/index.html)" {
		t.Fatalf("blocked %v, %v", added, err)
	}
	if again, err := sd.blocks.BlockSiteContent(t.Context(), c.Record, "again", nil); err != nil || len(again) != 0 {
		t.Fatalf("blocked again: %v, %v", again, err)
	}
	_, err = sd.svc.Create(t.Context(), sites.CreateParams{Slug: "second-kit", AnonTTL: time.Hour,
		Upload: sites.Upload{StorageType: sites.StorageFiles, Files: files}})
	var bc *sites.BlockedContentError
	if !errors.As(err, &bc) || bc.Path != "index.html" {
		t.Fatalf("the same kit again: %v", err)
	}
	if _, err := sd.svc.Create(t.Context(), sites.CreateParams{Slug: "same-style", AnonTTL: time.Hour,
		Upload: sites.Upload{StorageType: sites.StorageFiles, Files: files[1:]}}); err != nil {
		t.Fatalf("the stylesheet alone: %v", err)
	}
}

// TestBlockedVersionNotPromoted: a version whose content was blocked after
// it was deployed cannot be made live again, by a rollback or a promote:
// 403 naming the file, and the site keeps serving what it served.
func TestBlockedVersionNotPromoted(t *testing.T) {
	withKitVersion := func(t testing.TB) *tests.TestApp {
		app, sd := newFixtureApp(t)
		dep, err := app.FindRecordById(sites.DeploymentsCollection, idAliceSite)
		if err != nil {
			t.Fatal(err)
		}
		for _, page := range []string{kitPage, "<p>clean again</p>"} { // versions 2 and 3
			if dep, err = sd.svc.Replace(t.Context(), dep, sites.Metadata{}, htmlUpload(page)); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := sd.blocks.Add(t.Context(), sites.BlockContentHash, store.HashBytes([]byte(kitPage)), "", nil); err != nil {
			t.Fatal(err)
		}
		return app
	}
	stillClean := func(t testing.TB, app *tests.TestApp, res *http.Response) {
		if code, b := siteGet(t, app, "alice-site.sites.test", "/"); code != 200 || !strings.Contains(b, "clean again") {
			t.Fatalf("alice-site serves %d %q", code, b)
		}
	}
	refusal := errBody("Content blocked: index.html is on this server's blocklist")
	runScenarios(t, []tests.ApiScenario{
		{
			Name:            "rollback",
			Method:          http.MethodPost,
			URL:             "/deploy/" + idAliceSite + "/rollback",
			Headers:         bearer(keyAlice),
			Body:            strings.NewReader(`{"version":2}`),
			ExpectedStatus:  403,
			ExpectedContent: []string{refusal},
			TestAppFactory:  withKitVersion,
			AfterTestFunc:   stillClean,
		},
		{
			Name:            "promote",
			Method:          http.MethodPost,
			URL:             "/deploy/" + idAliceSite + "/versions/2/promote",
			Headers:         bearer(keyAlice),
			ExpectedStatus:  403,
			ExpectedContent: []string{refusal},
			TestAppFactory:  withKitVersion,
			AfterTestFunc:   stillClean,
		},
		{
			Name:            "a version without it",
			Method:          http.MethodPost,
			URL:             "/deploy/" + idAliceSite + "/rollback",
			Headers:         bearer(keyAlice),
			Body:            strings.NewReader(`{"version":1}`),
			ExpectedStatus:  200,
			ExpectedContent: []string{`"version":1`},
			TestAppFactory:  withKitVersion,
		},
	})
}
