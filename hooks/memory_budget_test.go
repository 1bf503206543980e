package hooks

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites/intake"
)

// TestMemLeaseLeavesResponseAlone: a reservation may be refused on any
// goroutine (a deploy's compression workers reserve at once), so a
// refusal never writes the response: the 503 and its Retry-After travel
// in the error, and the request's own goroutine answers with them.
func TestMemLeaseLeavesResponseAlone(t *testing.T) {
	app, sd := newBareApp(t)
	defer app.Cleanup()
	sd.Memory = intake.NewBudget(1 << 10)
	sd.MemoryWait = 0
	if !sd.Memory.Take(t.Context(), 1<<10, 0) {
		t.Fatal("could not fill the budget")
	}
	e := &core.RequestEvent{}
	e.Request = httptest.NewRequest(http.MethodPost, "/deploy", nil)
	rec := httptest.NewRecorder()
	e.Response = rec
	lease := sd.MemoryLease(e.Request.Context())
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { errs[i] = lease.Reserve(100) })
	}
	wg.Wait()
	for _, err := range errs {
		ae, _ := toAPIError(err)
		if err == nil || ae.Status != http.StatusServiceUnavailable || ae.Message != msgServerBusy {
			t.Fatalf("a refused reservation: %v, want 503 %q", err, msgServerBusy)
		}
	}
	if len(rec.Header()) != 0 {
		t.Fatalf("a refused reservation wrote the response's headers: %v", rec.Header())
	}
}

// TestSmallBodiesOwnPool: deploys that fill --deploy-memory do not make
// sign-in, page forms, claims or form submissions 503: bodies of at most
// intake.SmallBodyMax keep the rate and grace rules but take their memory from
// a pool of their own, which still refuses them (503) when it is spent.
func TestSmallBodiesOwnPool(t *testing.T) {
	app, sd := newFixtureApp(t)
	defer app.Cleanup()
	sd.MemoryWait = 50 * time.Millisecond
	if !sd.Memory.Take(t.Context(), sd.Memory.Max(), 0) { // deploys hold all of it
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
	sd.Memory.Give(sd.Memory.Max())
	if !sd.SmallMemory.Take(t.Context(), sd.SmallMemory.Max(), 0) {
		t.Fatal("could not fill the small pool")
	}
	res, body := do(t, mux, http.MethodPost, "/auth/otp", `{"email":"alice@example.com"}`, json)
	if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" || !strings.Contains(body, msgServerBusy) {
		t.Fatalf("sign-in with the small pool spent: %d %s (Retry-After %q)", res.StatusCode, body, res.Header.Get("Retry-After"))
	}
}
