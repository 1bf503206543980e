package hooks

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pocketbase/pocketbase/core"
)

// TestMemLeaseLeavesResponseAlone: a reservation may be refused on any
// goroutine (a deploy's compression workers reserve at once), so a
// refusal never writes the response: the 503 and its Retry-After travel
// in the error, and the request's own goroutine answers with them.
func TestMemLeaseLeavesResponseAlone(t *testing.T) {
	app, sd := newBareApp(t)
	defer app.Cleanup()
	sd.memory = newMemBudget(1 << 10)
	sd.memoryWait = 0
	if !sd.memory.take(t.Context(), 1<<10, 0) {
		t.Fatal("could not fill the budget")
	}
	e := &core.RequestEvent{}
	e.Request = httptest.NewRequest(http.MethodPost, "/deploy", nil)
	rec := httptest.NewRecorder()
	e.Response = rec
	lease := sd.memoryLease(e)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { errs[i] = lease.reserve(100) })
	}
	wg.Wait()
	for _, err := range errs {
		var ae *apiError
		if !errors.As(err, &ae) || ae.Status != http.StatusServiceUnavailable || ae.Message != msgServerBusy {
			t.Fatalf("a refused reservation: %v, want 503 %q", err, msgServerBusy)
		}
	}
	if len(rec.Header()) != 0 {
		t.Fatalf("a refused reservation wrote the response's headers: %v", rec.Header())
	}
}

// TestMemBudgetConcurrent: reservations and returns from many goroutines
// at once (run it with -race) leave the budget as it was.
func TestMemBudgetConcurrent(t *testing.T) {
	b := newMemBudget(64 << 10)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := range 200 {
				n := int64(1+i%7) << 10
				if b.take(t.Context(), n, 50*time.Millisecond) {
					b.give(n)
				}
			}
		})
	}
	wg.Wait()
	if n := b.inUse(); n != 0 {
		t.Fatalf("%d bytes still reserved", n)
	}
}

// forcedCollections is how many collections the process forced so far
// (runtime.GC, debug.FreeOSMemory).
func forcedCollections() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/forced:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestMemBudgetCollections: bytes given back count until a collection
// frees them, and a reservation they block runs one, but collections on
// the request path are bounded: at most one per reservation, none for a
// request that has ended, and no sooner than a second after the last
// unless a quarter of the budget has been given back since.
func TestMemBudgetCollections(t *testing.T) {
	const max = 1 << 20
	b := newMemBudget(max)
	ctx := t.Context()
	forced := forcedCollections()
	collections := func() uint64 { return forcedCollections() - forced }

	if !b.take(ctx, 900<<10, 0) {
		t.Fatal("first reservation")
	}
	b.give(100 << 10) // garbage until a collection
	if !b.take(ctx, 200<<10, 0) {
		t.Fatal("a reservation that fits once the garbage is collected was refused")
	}
	if n := collections(); n != 1 {
		t.Fatalf("%d collections, want 1", n)
	}

	// a little garbage, right after a collection: none, wait instead
	b.give(100 << 10)
	if b.take(ctx, 100<<10, 0) {
		t.Fatal("a reservation blocked by fresh garbage did not wait for the next collection")
	}
	if n := collections(); n != 1 {
		t.Fatalf("%d collections: a second one within a second of the first", n)
	}
	// a request that has ended collects nothing
	gone, cancel := context.WithCancel(ctx)
	cancel()
	if b.take(gone, 100<<10, time.Second) {
		t.Fatal("a reservation of an ended request")
	}
	if n := collections(); n != 1 {
		t.Fatalf("%d collections: one for an ended request", n)
	}
	// waiting: the next collection is due within the wait
	if !b.take(ctx, 100<<10, 3*time.Second) {
		t.Fatal("a reservation that waited for the next collection was refused")
	}
	if n := collections(); n != 2 {
		t.Fatalf("%d collections, want 2", n)
	}

	// a quarter of the budget given back: collected at once
	b.give(300 << 10)
	if !b.take(ctx, 300<<10, 0) {
		t.Fatal("a reservation blocked by a quarter of the budget in garbage was refused")
	}
	if n := collections(); n != 3 {
		t.Fatalf("%d collections, want 3", n)
	}
}

// TestSmallBodiesOwnPool: deploys that fill --deploy-memory do not make
// sign-in, page forms, claims or form submissions 503: bodies of at most
// smallBodyMax keep the rate and grace rules but take their memory from
// a pool of their own, which still refuses them (503) when it is spent.
func TestSmallBodiesOwnPool(t *testing.T) {
	app, sd := newFixtureApp(t)
	defer app.Cleanup()
	sd.memoryWait = 50 * time.Millisecond
	if !sd.memory.take(t.Context(), sd.memory.max, 0) { // deploys hold all of it
		t.Fatal("could not fill the deploy budget")
	}
	mux := newMux(t, app)
	json := map[string]string{"Content-Type": "application/json"}
	form := withHeaders(sameOrigin, map[string]string{"Accept": "text/html", "Content-Type": "application/x-www-form-urlencoded"})
	small := []struct {
		name, path, body string
		headers          map[string]string
		want             int
	}{
		{"sign-in code", "/auth/otp", `{"email":"alice@example.com"}`, json, http.StatusOK},
		{"sign-in page form", "/auth/login/code", "otp_id=x&code=1", form, http.StatusBadRequest},
		{"claim", "/deploy/claim", `{"slug":"anon-site","claim_token":"wrong"}`, withHeaders(bearer(keyPia), json), http.StatusBadRequest},
		{"form submission", "/submit/" + idAliceSite, `{"name":"x"}`, json, http.StatusOK},
	}
	for _, s := range small {
		res, body := do(t, mux, http.MethodPost, s.path, s.body, s.headers)
		if res.StatusCode != s.want {
			t.Errorf("%s with the deploy budget spent: %d %.200s, want %d", s.name, res.StatusCode, body, s.want)
		}
	}

	// the small pool spent: refused as deploys are
	sd.memory.give(sd.memory.max)
	if !sd.smallMemory.take(t.Context(), sd.smallMemory.max, 0) {
		t.Fatal("could not fill the small pool")
	}
	res, body := do(t, mux, http.MethodPost, "/auth/otp", `{"email":"alice@example.com"}`, json)
	if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" || !strings.Contains(body, msgServerBusy) {
		t.Fatalf("sign-in with the small pool spent: %d %s (Retry-After %q)", res.StatusCode, body, res.Header.Get("Retry-After"))
	}
}
