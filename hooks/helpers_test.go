package hooks

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/apis"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tests"
	"github.com/pocketbase/pocketbase/tools/hook"

	"sitedrop/hooks/dbconnect"
	_ "sitedrop/migrations"
	"sitedrop/sites"
	"sitedrop/sites/accounts"
)

// Fixture keys: fixed so that scenario tables can name them.
var (
	keyAlice = fixtureKey("alice")
	keyBob   = fixtureKey("bob")
	keyPia   = fixtureKey("pia")
	// keyUnknown has the right shape but belongs to no one.
	keyUnknown = fixtureKey("nobody")
)

// fixtureKey is a well-formed API key: the prefix and 40 characters.
func fixtureKey(name string) string {
	return accounts.APIKeyPrefix + name + strings.Repeat("0", 40-len(name))
}

// Fixture deployments (ids are PocketBase's 15 lowercase characters).
const (
	idAliceSite = "alicesite000001"
	idBobSite   = "bobsite00000001"
	idAnonSite  = "anonsite0000001"
	idOldAnon   = "oldanon00000001"
	anonToken   = "claim-token-of-anon-site"
	oldToken    = "claim-token-of-old-anon"
)

// testConfig is the configuration every test app runs with: small limits
// so tests can reach them.
func testConfig(t testing.TB) *Config {
	return &Config{
		Domain:             "web.test",
		SitesDomain:        "sites.test",
		AnonTTL:            24 * time.Hour,
		MaxBody:            64 << 10,
		MaxFiles:           10,
		AnonDeploysPerHour: 3,
		DeploysPerMinute:   100,
		ConcurrentDeploys:  4,
		Signup:             true,
		Serve:              DefaultConfig().Serve,
		GCGrace:            time.Nanosecond,
	}
}

// registry finds the sitedrop state of a test app from AfterTestFunc.
var registry sync.Map

func stateOf(t testing.TB, app *tests.TestApp) *built {
	t.Helper()
	sd, ok := registry.Load(app)
	if !ok {
		t.Fatal("app not registered")
	}
	return sd.(*built)
}

// siteGet fetches path from the site at host through the real site server.
func siteGet(t testing.TB, app *tests.TestApp, host, path string) (int, string) {
	t.Helper()
	sd := stateOf(t, app)
	slug, ok := sites.SlugFromHost(host, sd.cfg.SitesDomain)
	if !ok {
		t.Fatalf("%s is not a site host", host)
	}
	req := httptest.NewRequest(http.MethodGet, "http://"+host+path, nil)
	rec := httptest.NewRecorder()
	sd.server.ServeSite(rec, req, slug)
	return rec.Code, rec.Body.String()
}

// newBareApp is a fresh app with sitedrop registered and no data; tune
// changes the test configuration before registration.
func newBareApp(t testing.TB, tune ...func(*Config)) (*tests.TestApp, *built) {
	t.Helper()
	return openApp(t, templates.bare(t), tune...)
}

// openApp opens a test app on a copy of dir (a migrated data dir) and
// registers sitedrop on it.
func openApp(t testing.TB, dir string, tune ...func(*Config)) (*tests.TestApp, *built) {
	t.Helper()
	app, err := tests.NewTestAppWithConfig(core.BaseAppConfig{DataDir: dir, EncryptionEnv: "pb_test_env", DBConnect: dbconnect.Open})
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t)
	for _, f := range tune {
		f(cfg)
	}
	sd, err := register(app, cfg)
	if err != nil {
		t.Fatal(err)
	}
	registry.Store(app, sd)
	t.Cleanup(func() { registry.Delete(app) })
	// OnServe starts the app's cron (PocketBase's __pbCronStart__, at
	// priority 999); a test app stops it again just after, whoever
	// triggers OnServe: its jobs would change the database at each
	// minute's turn, between a test's reads (TestEveryFormIsPRG saw a
	// domain check land between two digests). Tests run a job by hand
	// (app.Cron().Jobs()[i].Run()).
	app.OnServe().Bind(&hook.Handler[*core.ServeEvent]{
		Id:       "sitedropTestsStopCron",
		Priority: 1000,
		Func: func(e *core.ServeEvent) error {
			e.App.Cron().Stop()
			return e.Next()
		},
	})
	// the app's copy of dir goes with the test (tests.TestApp.Cleanup
	// removes it too, but many tests never call it: a run left ~85 copies,
	// 150 MB, in the temp dir), unless it became a template
	copyDir := app.DataDir()
	t.Cleanup(func() {
		templates.mu.Lock()
		template := copyDir == templates.bareDir || copyDir == templates.fixtureDir
		templates.mu.Unlock()
		if !template {
			os.RemoveAll(copyDir)
		}
	})
	return app, sd
}

// templates are data dirs built once per test run and copied by every test
// app: migrating an empty database and hashing fixture passwords for each
// of hundreds of scenarios is what made the suite slow under -race.
var templates dataTemplates

type dataTemplates struct {
	mu                     sync.Mutex
	bareDir, fixtureDir    string
	bareErr, fixtureFailed bool
}

// bare is a migrated data dir with no data.
func (d *dataTemplates) bare(t testing.TB) string {
	t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.bareDir == "" && !d.bareErr {
		src := mustTempDir(t)
		app, err := tests.NewTestAppWithConfig(core.BaseAppConfig{DataDir: src, EncryptionEnv: "pb_test_env", DBConnect: dbconnect.Open}) // migrates a copy of src
		os.RemoveAll(src)
		if err != nil {
			d.bareErr = true
			t.Fatal(err)
		}
		app.ResetBootstrapState() // close the databases; keep the files
		d.bareDir = app.DataDir()
	}
	if d.bareErr {
		t.Fatal("no bare data template")
	}
	return d.bareDir
}

// fixtures is a data dir with the fixtures of newFixtureApp.
func (d *dataTemplates) fixtures(t testing.TB) string {
	t.Helper()
	bare := d.bare(t)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fixtureDir == "" && !d.fixtureFailed {
		d.fixtureFailed = true // until it is built
		app, sd := openApp(t, bare)
		alice := mustUser(t, app, "alice@example.com", "free", keyAlice)
		bob := mustUser(t, app, "bob@example.com", "free", keyBob)
		mustUser(t, app, "pia@example.com", "pro", keyPia)
		mustSession(t, app, alice, sessionAlice)
		mustSession(t, app, bob, sessionBob)
		mustDeploy(t, sd, alice, idAliceSite, "alice-site", "<h1>alice</h1>", "Alice")
		mustDeploy(t, sd, bob, idBobSite, "bob-site", "<h1>bob</h1>", "")
		mustAnon(t, sd, idAnonSite, "anon-site", anonToken, time.Now().Add(time.Hour))
		mustAnon(t, sd, idOldAnon, "old-anon", oldToken, time.Now().Add(-time.Minute))
		app.ResetBootstrapState()
		d.fixtureDir = app.DataDir()
		d.fixtureFailed = false
	}
	if d.fixtureFailed {
		t.Fatal("no fixture data template")
	}
	return d.fixtureDir
}

// mustTempDir is a temporary dir that outlives the test that made it.
func mustTempDir(t testing.TB) string {
	dir, err := os.MkdirTemp("", "sitedrop-template-*")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestMain runs the tests and removes the shared data templates.
func TestMain(m *testing.M) {
	code := m.Run()
	for _, dir := range []string{templates.bareDir, templates.fixtureDir} {
		if dir != "" {
			os.RemoveAll(dir)
		}
	}
	os.Exit(code)
}

// newTestApp is a fresh app with the fixtures: alice (free) owns
// alice-site, bob (free) owns bob-site, pia is pro; anon-site is an
// anonymous deployment claimable with anonToken, old-anon an expired one.
func newTestApp(t testing.TB) *tests.TestApp {
	app, _ := newFixtureApp(t)
	return app
}

func newFixtureApp(t testing.TB, tune ...func(*Config)) (*tests.TestApp, *built) {
	t.Helper()
	return openApp(t, templates.fixtures(t), tune...)
}

// mustUser creates a user with plan and an API key whose plaintext is key.
func mustUser(t testing.TB, app core.App, email, plan, key string) *core.Record {
	t.Helper()
	user, _, err := accounts.UpsertUser(app, accounts.NormalizeEmail(email), plan)
	if err != nil {
		t.Fatal(err)
	}
	col, err := app.FindCollectionByNameOrId(accounts.APIKeysCollection)
	if err != nil {
		t.Fatal(err)
	}
	rec := core.NewRecord(col)
	rec.Set("user", user.Id)
	rec.Set("name", "fixture")
	rec.Set("prefix", key[:11])
	rec.Set("hash", accounts.HashSecret(key))
	if err := app.Save(rec); err != nil {
		t.Fatal(err)
	}
	return user
}

// mustDeploy creates an owned single-page deployment.
func mustDeploy(t testing.TB, sd *built, owner *core.Record, id, slug, html, title string) *core.Record {
	t.Helper()
	p := sites.CreateParams{
		ID:     id,
		Owner:  owner,
		Slug:   slug,
		Meta:   sites.Metadata{Title: &title},
		Upload: htmlUpload(html),
	}
	c, err := sd.svc.Create(context.Background(), p)
	if err != nil {
		t.Fatalf("create %s: %v", slug, err)
	}
	return c.Record
}

// mustAnon creates an anonymous deployment with a known claim token and
// expiry.
func mustAnon(t testing.TB, sd *built, id, slug, token string, expires time.Time) *core.Record {
	t.Helper()
	c, err := sd.svc.Create(context.Background(), sites.CreateParams{
		ID: id, Slug: slug, Upload: htmlUpload("<h1>" + slug + "</h1>"), AnonTTL: time.Hour,
	})
	if err != nil {
		t.Fatalf("create %s: %v", slug, err)
	}
	rec := c.Record
	rec.Set("claim_token_hash", accounts.HashSecret(token))
	rec.Set("expires_at", expires.UTC())
	if err := sd.app.Save(rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

func htmlUpload(html string) sites.Upload {
	return sites.Upload{StorageType: sites.StorageHTML, Files: []sites.File{{
		Path: "index.html", ContentType: "text/html; charset=utf-8", Data: []byte(html),
	}}}
}

// bearer is an Authorization header for key.
func bearer(key string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + key}
}

// newMux builds the app's HTTP handler once, for tests that send several
// requests to the same app (ApiScenario builds one per request). The
// middlewares are bound before OnServe, as apis.Serve binds its own.
func newMux(t testing.TB, app *tests.TestApp, middlewares ...*hook.Handler[*core.RequestEvent]) http.Handler {
	t.Helper()
	r, err := apis.NewRouter(app)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range middlewares {
		r.Bind(m)
	}
	se := new(core.ServeEvent)
	se.App, se.Router = app, r
	var mux http.Handler
	err = app.OnServe().Trigger(se, func(e *core.ServeEvent) (err error) {
		mux, err = e.Router.BuildMux()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return mux
}

// do sends one request to mux and returns the status and body.
func do(t testing.TB, mux http.Handler, method, url, body string, headers map[string]string) (*http.Response, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, url, rd)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	res := rec.Result()
	b, _ := io.ReadAll(res.Body)
	checkAnswer(t, req, res, b)
	return res, string(b)
}

func dbxOwner(id string) dbx.Expression      { return dbx.HashExp{"owner": id} }
func dbxDeployment(id string) dbx.Expression { return dbx.HashExp{"deployment": id} }

// runScenarios runs each scenario as a parallel subtest: every one builds
// its own app, so they share nothing. Each answer of a described route is
// validated against openapi.json.
func runScenarios(t *testing.T, scenarios []tests.ApiScenario) {
	t.Helper()
	for _, s := range scenarios {
		s := validatedScenario(s)
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			s.Test(t)
		})
	}
}

// Fixture browser sessions, by their cookie values.
var (
	sessionAlice = "session-of-alice-0000000000000000000000000"
	sessionBob   = "session-of-bob-000000000000000000000000000"
)

// mustSession stores a browser session for user, on the user's first API
// key, whose cookie value is token.
func mustSession(t testing.TB, app core.App, user *core.Record, token string) {
	t.Helper()
	col, err := app.FindCollectionByNameOrId(accounts.SessionsCollection)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := accounts.ListAPIKeys(app, user)
	if err != nil || len(keys) == 0 {
		t.Fatalf("no key for %s's session", user.Email())
	}
	rec := core.NewRecord(col)
	rec.Set("user", user.Id)
	rec.Set("api_key", keys[0].Id)
	rec.Set("token_hash", accounts.HashSecret(token))
	rec.Set("expires_at", time.Now().Add(time.Hour).UTC())
	if err := app.Save(rec); err != nil {
		t.Fatal(err)
	}
}

// cookie is a Cookie header carrying a session token (plain HTTP names).
func cookie(token string) map[string]string {
	return map[string]string{"Cookie": "sitedrop_session=" + token}
}

// withHeaders merges header maps.
func withHeaders(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// codeFromMail reads the sign-in code from the last mail the test mailer
// caught.
func codeFromMail(t testing.TB, app *tests.TestApp) string {
	t.Helper()
	msg := app.TestMailer.LastMessage()
	m := regexp.MustCompile(`\b\d{8}\b`).FindString(msg.Text)
	if m == "" {
		t.Fatalf("no code in mail %q", msg.Text)
	}
	return m
}

// newRequest builds a request for mux.
func newRequest(method, url, body string, headers map[string]string) *http.Request {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, url, rd)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	return req
}

// roundTrip sends req to mux and returns the response, its answer
// validated against openapi.json (see checkAnswer).
func roundTrip(t testing.TB, mux http.Handler, req *http.Request) *http.Response {
	t.Helper()
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	res := rec.Result()
	body, _ := io.ReadAll(res.Body)
	checkAnswer(t, req, res, body)
	return res
}

// TestTestAppsStopTheCron: after OnServe, whoever triggers it (newMux,
// a test's own router, the route walk), a test app's cron is stopped,
// so no job changes its database at a minute's turn.
func TestTestAppsStopTheCron(t *testing.T) {
	app, _ := newFixtureApp(t)
	defer app.Cleanup()
	// a started cron's ticker begins at the next turn of its interval:
	// a short one shows within milliseconds whether it was started
	app.Cron().SetInterval(5 * time.Millisecond)
	for _, serve := range []struct {
		what    string
		trigger func()
	}{
		{"newMux", func() { newMux(t, app) }},
		{"the route walk's OnServe", func() { registeredRoutes(t, app) }},
	} {
		serve.trigger()
		time.Sleep(50 * time.Millisecond)
		if app.Cron().HasStarted() {
			t.Fatalf("the cron runs after %s", serve.what)
		}
	}
}
