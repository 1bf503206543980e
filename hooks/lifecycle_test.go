package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tests"

	"sitedrop/sites"
	"sitedrop/sites/accounts"
	"sitedrop/sites/store"
)

// TestSlotLimitUnderConcurrentCreates fires more creates than alice has
// slots, all at once: exactly the free slots are filled.
func TestSlotLimitUnderConcurrentCreates(t *testing.T) {
	t.Parallel()
	app, _ := newFixtureApp(t)
	defer app.Cleanup()
	mux := newMux(t, app)

	const n = 16
	codes := make(chan int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := fmt.Sprintf(`{"html":"<p>%d</p>","slug":"race-%s"}`, i, strings.Repeat("x", i+1))
			res, _ := do(t, mux, http.MethodPost, "/deploy", body, bearer(keyAlice))
			codes <- res.StatusCode
		}()
	}
	wg.Wait()
	close(codes)
	got := map[int]int{}
	for c := range codes {
		got[c]++
	}
	// alice has one fixture deployment: four of five slots were free.
	if got[200] != 4 || got[403] != n-4 {
		t.Fatalf("statuses %v, want 4×200 and %d×403", got, n-4)
	}
	alice, _ := app.FindAuthRecordByEmail("users", "alice@example.com")
	if c, _ := app.CountRecords("deployments", dbxOwner(alice.Id)); c != 5 {
		t.Fatalf("alice owns %d deployments, want 5", c)
	}
}

// TestSlotLimitUnderConcurrentClaims lets bob, one slot short of his
// limit, claim two anonymous deployments at once: one claim wins.
func TestSlotLimitUnderConcurrentClaims(t *testing.T) {
	t.Parallel()
	app, sd := newFixtureApp(t)
	defer app.Cleanup()
	bob, _ := app.FindAuthRecordByEmail("users", "bob@example.com")
	for _, s := range []string{"two", "three", "four"} {
		mustDeploy(t, sd, bob, "", "bob-"+s, "x", "")
	}
	mustAnon(t, sd, "anonsite0000002", "anon-two", "token-two", time.Now().Add(time.Hour))
	mux := newMux(t, app)

	var wg sync.WaitGroup
	codes := make([]int, 2)
	for i, c := range [][2]string{{"anon-site", anonToken}, {"anon-two", "token-two"}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, _ := do(t, mux, http.MethodPost, "/deploy/claim",
				fmt.Sprintf(`{"slug":%q,"claim_token":%q}`, c[0], c[1]), bearer(keyBob))
			codes[i] = res.StatusCode
		}()
	}
	wg.Wait()
	if !(codes[0] == 200 && codes[1] == 403 || codes[0] == 403 && codes[1] == 200) {
		t.Fatalf("claim statuses %v, want one 200 and one 403", codes)
	}
	if c, _ := app.CountRecords("deployments", dbxOwner(bob.Id)); c != 5 {
		t.Fatalf("bob owns %d deployments, want 5", c)
	}
}

// TestAnonymousDeployRateLimit: past the per-IP hourly limit anonymous
// deploys get 429 with Retry-After; keyed deploys are not limited by it.
func TestAnonymousDeployRateLimit(t *testing.T) {
	t.Parallel()
	app, _ := newFixtureApp(t)
	defer app.Cleanup()
	mux := newMux(t, app)
	for i := range 3 {
		if res, body := do(t, mux, http.MethodPost, "/deploy", `{"html":"x"}`, nil); res.StatusCode != 200 {
			t.Fatalf("deploy %d: %d %s", i, res.StatusCode, body)
		}
	}
	res, body := do(t, mux, http.MethodPost, "/deploy", `{"html":"x"}`, nil)
	if res.StatusCode != 429 || body != errBody(msgRateLimited)+"\n" && body != errBody(msgRateLimited) {
		t.Fatalf("4th anonymous deploy: %d %s", res.StatusCode, body)
	}
	if ra := res.Header.Get("Retry-After"); ra == "" || ra == "0" {
		t.Fatalf("Retry-After = %q", ra)
	}
	if res, body := do(t, mux, http.MethodPost, "/deploy", `{"html":"x"}`, bearer(keyPia)); res.StatusCode != 200 {
		t.Fatalf("keyed deploy after the anonymous limit: %d %s", res.StatusCode, body)
	}
}

// TestExpiryJobPurgesAndCollects: the job deletes expired anonymous
// deployments and, with them, the content no one else shares.
func TestExpiryJobPurgesAndCollects(t *testing.T) {
	t.Parallel()
	app, sd := newFixtureApp(t)
	defer app.Cleanup()
	old, _ := sd.svc.LoadSite("old-anon")
	oldHash := old.Files["index.html"].Hash

	sd.jobs.Run(sd.upkeep.Expire)

	if _, err := app.FindRecordById("deployments", idOldAnon); err == nil {
		t.Fatal("expired deployment still there")
	}
	if _, err := app.FindRecordById("deployments", idAnonSite); err != nil {
		t.Fatal("live anonymous deployment was purged")
	}
	if ok, _ := sd.svc.Store().Has(context.Background(), oldHash); ok {
		t.Fatal("content of the purged deployment was not collected")
	}
	live, _ := sd.svc.LoadSite("alice-site")
	if ok, _ := sd.svc.Store().Has(context.Background(), live.Files["index.html"].Hash); !ok {
		t.Fatal("the collector removed live content")
	}
	if code, _ := siteGet(t, app, "alice-site.sites.test", "/"); code != 200 {
		t.Fatal("live site broken after collection")
	}
}

// TestDashboardDeletion: a superuser deleting a deployment through
// PocketBase's records API (what the dashboard does) gets the same
// lifecycle as the API: offline at once, slug and slot free, content
// collected.
func TestDashboardDeletion(t *testing.T) {
	t.Parallel()
	app, sd := newFixtureApp(t)
	defer app.Cleanup()
	mux := newMux(t, app)
	if code, _ := siteGet(t, app, "alice-site.sites.test", "/"); code != 200 {
		t.Fatal("fixture site not served")
	}
	site, _ := sd.svc.LoadSite("alice-site")
	hash := site.Files["index.html"].Hash

	token := superuserToken(t, app)
	res, body := do(t, mux, http.MethodDelete, "/api/collections/deployments/records/"+idAliceSite, "",
		map[string]string{"Authorization": token})
	if res.StatusCode != 204 {
		t.Fatalf("dashboard delete: %d %s", res.StatusCode, body)
	}
	if code, _ := siteGet(t, app, "alice-site.sites.test", "/"); code != 404 {
		t.Fatalf("site still served after dashboard deletion: %d", code)
	}
	if n, _ := app.CountRecords("versions", dbxDeployment(idAliceSite)); n != 0 {
		t.Fatalf("%d versions left", n)
	}
	// slug and slot are free
	if res, body := do(t, mux, http.MethodPost, "/deploy", `{"html":"again","slug":"alice-site"}`, bearer(keyAlice)); res.StatusCode != 200 {
		t.Fatalf("redeploy on the freed slug: %d %s", res.StatusCode, body)
	}
	// content that no one shares is collected
	sd.jobs.Run(sd.upkeep.Expire)
	if ok, _ := sd.svc.Store().Has(context.Background(), hash); ok {
		t.Fatal("deleted deployment's content still stored")
	}
}

// TestRestartKeepsSites: deployments, content and keys survive the app
// closing and a new one opening the same data dir.
func TestRestartKeepsSites(t *testing.T) {
	t.Parallel()
	app1, _ := newFixtureApp(t)
	mux1 := newMux(t, app1)
	res, body := do(t, mux1, http.MethodPost, "/deploy",
		`{"files":[{"path":"index.html","content":"<p>before restart</p>"},{"path":"css/a.css","content":"p{}"}],"slug":"survivor"}`,
		bearer(keyAlice))
	if res.StatusCode != 200 {
		t.Fatalf("deploy: %d %s", res.StatusCode, body)
	}
	if err := app1.ResetBootstrapState(); err != nil { // closes the databases
		t.Fatal(err)
	}
	app2, err := tests.NewTestApp(app1.DataDir()) // a fresh process on a copy of the data dir
	app1.Cleanup()
	if err != nil {
		t.Fatal(err)
	}
	defer app2.Cleanup()
	sd2, err := register(app2, testConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	registry.Store(app2, sd2)
	defer registry.Delete(app2)

	if code, b := siteGet(t, app2, "survivor.sites.test", "/"); code != 200 || !strings.Contains(b, "before restart") {
		t.Fatalf("after restart: %d %q", code, b)
	}
	if code, _ := siteGet(t, app2, "survivor.sites.test", "/css/a.css"); code != 200 {
		t.Fatalf("asset after restart: %d", code)
	}
	mux2 := newMux(t, app2)
	if res, body := do(t, mux2, http.MethodGet, "/deploys", "", bearer(keyAlice)); res.StatusCode != 200 || !strings.Contains(body, "survivor") {
		t.Fatalf("list after restart: %d %s", res.StatusCode, body)
	}
}

// failingStore fails every Put after the first ok ones.
type failingStore struct {
	store.BlobStore
	mu sync.Mutex
	ok int
}

func (f *failingStore) Put(ctx context.Context, h string, data []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ok == 0 {
		return errors.New("injected store failure")
	}
	f.ok--
	return f.BlobStore.Put(ctx, h, data)
}

// TestPutFailingHalfwayKeepsOldSite: a store error between blob writes and
// the switch, and an error inside the switch's transaction, both leave the
// old site whole, and the orphaned blobs are collected.
func TestPutFailingHalfwayKeepsOldSite(t *testing.T) {
	t.Parallel()
	newBody := `{"files":[{"path":"index.html","content":"<p>new 1</p>"},{"path":"b.html","content":"<p>new 2</p>"},{"path":"c.html","content":"<p>new 3</p>"}]}`

	check := func(t *testing.T, app *tests.TestApp, sd *built) {
		t.Helper()
		code, b := siteGet(t, app, "alice-site.sites.test", "/")
		if code != 200 || !strings.Contains(b, "<h1>alice</h1>") {
			t.Fatalf("old site not whole: %d %q", code, b)
		}
		if code, _ := siteGet(t, app, "alice-site.sites.test", "/b"); code != 404 {
			t.Fatalf("a file of the failed PUT is served: %d", code)
		}
		if n, _ := app.CountRecords("versions", dbxDeployment(idAliceSite)); n != 1 {
			t.Fatalf("versions: %d, want 1", n)
		}
		// The blobs written before the failure are orphans; the collector
		// removes them and keeps the live ones.
		if _, err := sd.svc.CollectGarbage(context.Background(), 0); err != nil {
			t.Fatal(err)
		}
		n := 0
		sd.svc.Store().Walk(context.Background(), func(string, time.Time) error { n++; return nil })
		if n != 5 { // the four fixture pages, and alice's page as sent (before its title was added)
			t.Fatalf("%d blobs after collection, want 5", n)
		}
		if code, _ := siteGet(t, app, "alice-site.sites.test", "/"); code != 200 {
			t.Fatal("collection broke the live site")
		}
	}

	t.Run("store error mid-write", func(t *testing.T) {
		app, sd := newFixtureApp(t)
		defer app.Cleanup()
		siteGet(t, app, "alice-site.sites.test", "/") // cached
		// the deploy API over a store that fails after one write (the
		// services are bound when built: a new one gets its own binding)
		sd.svc = sites.NewService(app, &failingStore{BlobStore: sd.svc.Store(), ok: 1}, sites.ServiceConfig{})
		mux := newDeployMux(t, app, sd, sd.svc)
		res, body := do(t, mux, http.MethodPut, "/deploy/"+idAliceSite, newBody, bearer(keyAlice))
		if res.StatusCode != 500 || !strings.Contains(body, msgInternal) {
			t.Fatalf("PUT: %d %s", res.StatusCode, body)
		}
		check(t, app, sd)
	})

	t.Run("error inside the switch transaction", func(t *testing.T) {
		app, sd := newFixtureApp(t)
		defer app.Cleanup()
		siteGet(t, app, "alice-site.sites.test", "/")
		app.OnRecordUpdateExecute(sites.DeploymentsCollection).BindFunc(func(e *core.RecordEvent) error {
			return errors.New("injected failure before commit")
		})
		mux := newMux(t, app)
		res, body := do(t, mux, http.MethodPut, "/deploy/"+idAliceSite, newBody, bearer(keyAlice))
		if res.StatusCode != 500 {
			t.Fatalf("PUT: %d %s", res.StatusCode, body)
		}
		check(t, app, sd)
	})
}

// TestAccountDeletionTakesSitesDown: deleting an account (from the
// dashboard) deletes its keys and deployments, and the sites go offline.
func TestAccountDeletionTakesSitesDown(t *testing.T) {
	t.Parallel()
	app, _ := newFixtureApp(t)
	defer app.Cleanup()
	if code, _ := siteGet(t, app, "bob-site.sites.test", "/"); code != 200 {
		t.Fatal("fixture site not served")
	}
	bob, _ := app.FindAuthRecordByEmail("users", "bob@example.com")
	if err := app.Delete(bob); err != nil {
		t.Fatal(err)
	}
	if _, err := app.FindRecordById("deployments", idBobSite); err == nil {
		t.Fatal("deployment of a deleted account remains")
	}
	if code, _ := siteGet(t, app, "bob-site.sites.test", "/"); code != 404 {
		t.Fatalf("site of a deleted account served: %d", code)
	}
	if _, err := accounts.UserByAPIKey(app, keyBob); err == nil {
		t.Fatal("key of a deleted account works")
	}
}

// TestYoungOrphansAreRetried: content orphaned less than the grace period
// ago is kept, and the collection stays due for the next run.
func TestYoungOrphansAreRetried(t *testing.T) {
	t.Parallel()
	app, sd := newFixtureApp(t)
	defer app.Cleanup()
	sd.upkeep.Grace = time.Hour
	site, _ := sd.svc.LoadSite("bob-site")
	bob, _ := app.FindRecordById("deployments", idBobSite)
	if err := sd.svc.Delete(context.Background(), bob); err != nil {
		t.Fatal(err)
	}
	sd.jobs.Run(sd.upkeep.Expire)
	if ok, _ := sd.svc.Store().Has(context.Background(), site.Files["index.html"].Hash); !ok {
		t.Fatal("a blob younger than the grace period was collected")
	}
	if !sd.upkeep.TakeDue() {
		t.Fatal("collection not kept due for the deferred blob")
	}
	sd.upkeep.Grace = time.Nanosecond
	sd.upkeep.MarkDue()
	sd.jobs.Run(sd.upkeep.Expire)
	if ok, _ := sd.svc.Store().Has(context.Background(), site.Files["index.html"].Hash); ok {
		t.Fatal("deferred blob not collected once old enough")
	}
}

// TestRefusedDeploysStoreNothing: deploys refused for their slug or the
// plan's limit write no content.
func TestRefusedDeploysStoreNothing(t *testing.T) {
	t.Parallel()
	app, sd := newFixtureApp(t)
	defer app.Cleanup()
	alice, _ := app.FindAuthRecordByEmail("users", "alice@example.com")
	for _, s := range []string{"two", "three", "four", "five"} {
		mustDeploy(t, sd, alice, "", "site-"+s, "x", "")
	}
	count := func() int {
		n := 0
		sd.svc.Store().Walk(context.Background(), func(string, time.Time) error { n++; return nil })
		return n
	}
	before := count()
	mux := newMux(t, app)
	for _, c := range []struct {
		key, body string
		status    int
	}{
		{keyAlice, `{"html":"<p>unique content 1</p>"}`, 403},
		{keyBob, `{"html":"<p>unique content 2</p>","slug":"alice-site"}`, 409},
		{keyBob, `{"html":"<p>unique content 3</p>","slug":"admin"}`, 409},
	} {
		if res, body := do(t, mux, http.MethodPost, "/deploy", c.body, bearer(c.key)); res.StatusCode != c.status {
			t.Fatalf("%s: %d %s", c.body, res.StatusCode, body)
		}
	}
	if after := count(); after != before {
		t.Fatalf("refused deploys stored %d blobs", after-before)
	}
}

// TestKeyedDeployRateLimit: an account's deploys (POST and PUT) are limited
// per minute.
func TestKeyedDeployRateLimit(t *testing.T) {
	t.Parallel()
	app, _ := newBareApp(t, func(c *Config) { c.DeploysPerMinute = 2 })
	defer app.Cleanup()
	mustUser(t, app, "alice@example.com", "pro", keyAlice)
	mustUser(t, app, "bob@example.com", "pro", keyBob)
	mux := newMux(t, app)
	res, body := do(t, mux, http.MethodPost, "/deploy", `{"html":"1"}`, bearer(keyAlice))
	if res.StatusCode != 200 {
		t.Fatalf("first: %d %s", res.StatusCode, body)
	}
	var created struct{ ID string }
	if err := json.Unmarshal([]byte(body), &created); err != nil {
		t.Fatal(err)
	}
	id := created.ID
	if res, body := do(t, mux, http.MethodPut, "/deploy/"+id, `{"html":"2"}`, bearer(keyAlice)); res.StatusCode != 200 {
		t.Fatalf("second: %d %s", res.StatusCode, body)
	}
	res, body = do(t, mux, http.MethodPost, "/deploy", `{"html":"3"}`, bearer(keyAlice))
	if res.StatusCode != 429 || !strings.Contains(body, msgRateLimited) || res.Header.Get("Retry-After") == "" {
		t.Fatalf("third: %d %s", res.StatusCode, body)
	}
	if res, body := do(t, mux, http.MethodPost, "/deploy", `{"html":"4"}`, bearer(keyBob)); res.StatusCode != 200 {
		t.Fatalf("another account is limited separately: %d %s", res.StatusCode, body)
	}
}

// TestDeploysWaitForASlot: past --concurrent-deploys a deploy waits, and a
// client that gives up while waiting is logged as 499 (the client's doing)
// with nothing stored.
func TestDeploysWaitForASlot(t *testing.T) {
	t.Parallel()
	app, sd := newFixtureApp(t)
	defer app.Cleanup()
	mux := newMux(t, app)
	var busy []func()
	for range sd.cfg.ConcurrentDeploys {
		release, err := sd.gate.Acquire(t.Context()) // every slot busy
		if err != nil {
			t.Fatal(err)
		}
		busy = append(busy, release)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/deploy", strings.NewReader(`{"html":"x","slug":"waiting-site"}`))
	req.Header.Set("Authorization", "Bearer "+keyPia)
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	if rec.Code != statusClientClosed {
		t.Fatalf("busy: %d %s", rec.Code, rec.Body)
	}
	busy[0]() // one slot frees up
	if res, body := do(t, mux, http.MethodPost, "/deploy", `{"html":"x","slug":"waiting-site"}`, bearer(keyPia)); res.StatusCode != 200 {
		t.Fatalf("after a slot freed: %d %s", res.StatusCode, body)
	}
}

// TestOwnerEditClearsExpiry: giving an anonymous deployment an owner in the
// dashboard makes it permanent, as a claim does.
func TestOwnerEditClearsExpiry(t *testing.T) {
	t.Parallel()
	app, _ := newFixtureApp(t)
	defer app.Cleanup()
	bob, _ := app.FindAuthRecordByEmail("users", "bob@example.com")
	rec, _ := app.FindRecordById("deployments", idAnonSite)
	rec.Set("owner", bob.Id)
	if err := app.Save(rec); err != nil {
		t.Fatal(err)
	}
	rec, _ = app.FindRecordById("deployments", idAnonSite)
	if !rec.GetDateTime("expires_at").IsZero() || rec.GetString("claim_token_hash") != "" {
		t.Fatal("an owned deployment keeps its expiry or claim token")
	}
}
