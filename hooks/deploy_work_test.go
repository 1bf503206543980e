package hooks

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/pocketbase/pocketbase/apis"
	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
	"sitedrop/sites/intake"
	"sitedrop/sites/store"
)

// TestDeployWorkBudget: a deploy's work (validating, the rule files,
// compressing and storing, the report) has one budget, anonymous deploys
// a tighter one; past it the deploy is answered 503 with Retry-After and
// nothing is committed: no deployment, no new version.
func TestDeployWorkBudget(t *testing.T) {
	app, sd := newFixtureApp(t)
	defer app.Cleanup()
	mux := newMux(t, app)
	deployments := func() int {
		n, err := app.CountRecords("deployments")
		if err != nil {
			t.Fatal(err)
		}
		return int(n)
	}
	versions := func() int {
		n, err := app.CountRecords("versions")
		if err != nil {
			t.Fatal(err)
		}
		return int(n)
	}
	site := `{"files":[{"path":"index.html","content":"<title>t</title><a href=/a>a</a>"},{"path":"_redirects","content":"/old /new 301"}]}`
	overBudget := func(what string, res *http.Response, body string) {
		t.Helper()
		if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" ||
			!strings.Contains(body, "Deploy took too long") || !strings.Contains(body, "nothing was deployed") {
			t.Fatalf("%s over its work budget: %d %s (Retry-After %q)", what, res.StatusCode, body, res.Header.Get("Retry-After"))
		}
	}

	// anonymous: its own, tighter budget
	sd.AnonWork = time.Nanosecond
	before, vBefore := deployments(), versions()
	res, body := do(t, mux, http.MethodPost, "/deploy", site, map[string]string{"Content-Type": "application/json"})
	overBudget("an anonymous deploy", res, body)
	if deployments() != before || versions() != vBefore {
		t.Fatal("an anonymous deploy over its budget was committed")
	}
	// keyed deploys keep theirs
	res, body = do(t, mux, http.MethodPost, "/deploy", site, withHeaders(bearer(keyPia), map[string]string{"Content-Type": "application/json"}))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("a keyed deploy within its budget: %d %s", res.StatusCode, body)
	}

	// keyed create and update
	sd.KeyedWork = time.Nanosecond
	before, vBefore = deployments(), versions()
	res, body = do(t, mux, http.MethodPost, "/deploy", site, withHeaders(bearer(keyPia), map[string]string{"Content-Type": "application/json"}))
	overBudget("a keyed deploy", res, body)
	res, body = do(t, mux, http.MethodPut, "/deploy/"+idAliceSite, site, withHeaders(bearer(keyAlice), map[string]string{"Content-Type": "application/json"}))
	overBudget("an update", res, body)
	if deployments() != before || versions() != vBefore {
		t.Fatal("a keyed deploy over its budget was committed")
	}

	// the deadline passes inside Create and Replace, while the store
	// writes the blobs (a store that ignores the context): still nothing
	// is committed, and the answer says why
	sd.KeyedWork = 300 * time.Millisecond
	slow := sites.NewService(app, &slowStore{BlobStore: sd.svc.Store(), delay: 400 * time.Millisecond}, sites.ServiceConfig{})
	mux = newDeployMux(t, app, sd, slow) // the deploy API is bound with the service it is handed
	before, vBefore = deployments(), versions()
	fresh := `{"files":[{"path":"index.html","content":"<title>slow</title><p>a page the store takes long to write</p>"}]}`
	res, body = do(t, mux, http.MethodPost, "/deploy", fresh, withHeaders(bearer(keyPia), map[string]string{"Content-Type": "application/json"}))
	overBudget("a create whose store is slow", res, body)
	update := strings.Replace(fresh, "slow", "slower", 1) // blobs the store has not got yet
	res, body = do(t, mux, http.MethodPut, "/deploy/"+idAliceSite, update, withHeaders(bearer(keyAlice), map[string]string{"Content-Type": "application/json"}))
	overBudget("an update whose store is slow", res, body)
	if deployments() != before || versions() != vBefore {
		t.Fatal("a deploy whose deadline passed inside Create or Replace was committed")
	}
}

// slowStore takes delay for every blob it writes, whatever the context.
type slowStore struct {
	store.BlobStore
	delay time.Duration
}

func (s *slowStore) Put(ctx context.Context, h string, data []byte) error {
	time.Sleep(s.delay)
	return s.BlobStore.Put(context.WithoutCancel(ctx), h, data)
}

// TestWorkBudgetOnlyContextErrors: past the deploy's work budget, only an
// error the budget caused becomes "Deploy took too long"; a refusal of
// its own (a slug taken meanwhile, the slot limit) stays what it is.
func TestWorkBudgetOnlyContextErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	<-ctx.Done()
	e := &core.RequestEvent{}
	e.Request = httptest.NewRequest(http.MethodPost, "/deploy", nil)
	e.Response = httptest.NewRecorder()
	for _, tc := range []struct {
		name    string
		err     error
		status  int
		tooLong bool // answered as the work budget's
	}{
		{"the budget's end", ctx.Err(), http.StatusServiceUnavailable, true},
		{"the budget's end, wrapped", errors.Join(errors.New("store blob"), ctx.Err()), http.StatusServiceUnavailable, true},
		{"slug taken", sites.ErrSlugTaken, http.StatusConflict, false},
		{"slot limit", sites.ErrSlotLimit, http.StatusForbidden, false},
		{"the memory budget", intake.ErrBusy, http.StatusServiceUnavailable, false},
		{"a store failure", errors.New("disk full"), http.StatusInternalServerError, false},
	} {
		ae, _ := toAPIError(intake.OverWorkBudget(e.Request.Context(), ctx, time.Second, tc.err))
		if ae.Status != tc.status || strings.Contains(ae.Message, "Deploy took too long") != tc.tooLong {
			t.Errorf("%s: %d %q, want %d (the work budget's: %v)", tc.name, ae.Status, ae.Message, tc.status, tc.tooLong)
		}
		if tc.status == http.StatusServiceUnavailable && ae.RetryAfter == 0 {
			t.Errorf("%s: 503 without Retry-After", tc.name)
		}
	}
	if intake.AnonDeployWork > 8*time.Second {
		t.Errorf("anonymous work budget %s: at most 8 s, report included", intake.AnonDeployWork)
	}
}

// newDeployMux is the deploy API alone, bound as register binds it but
// over svc (a test's service), behind the one error exit.
func newDeployMux(t testing.TB, app core.App, sd *built, svc *sites.Service) http.Handler {
	t.Helper()
	r, err := apis.NewRouter(app)
	if err != nil {
		t.Fatal(err)
	}
	r.Bind(jsonErrorsMiddleware())
	api := &deployAPI{settings: sd.settings, links: sd.cfg.links(), deploys: svc, intake: &intake.Deploys{Guards: sd.Guards, Gate: sd.gate, MaxBody: sd.cfg.MaxBody, MaxFiles: sd.cfg.MaxFiles}, proxies: sd.proxies, gc: sd.upkeep}
	bindDeployAPI(r, api, &apiAuth{sessions: sd.sessions, deploys: svc})
	mux, err := r.BuildMux()
	if err != nil {
		t.Fatal(err)
	}
	return mux
}
