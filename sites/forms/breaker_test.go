package forms_test

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites/forms"
)

// fakeClock is a Deliverer clock that moves only when the test sets it.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// flakyReceiver counts its requests; while down it never answers (the
// sender gives up at its timeout), else it answers 204.
type flakyReceiver struct {
	*receiver
	hits atomic.Int64
	down atomic.Bool
}

func newFlakyReceiver(t *testing.T) *flakyReceiver {
	t.Helper()
	f := &flakyReceiver{}
	f.down.Store(true)
	f.receiver = newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		f.hits.Add(1)
		if f.down.Load() {
			<-r.Context().Done()
			return
		}
		okAnswer(n, w, r)
	})
	return f
}

// breakerFixture queues 20 deployment.updated deliveries for one account's
// webhook to a receiver that never answers, and gives the same account a
// second webhook, subscribed to submissions only, whose receiver answers.
func breakerFixture(t *testing.T) (core.App, *flakyReceiver, *receiver, forms.DeploymentRef) {
	t.Helper()
	app := newHookApp(t)
	dead := newFlakyReceiver(t)
	live := newReceiver(t, okAnswer)
	alice := mustUser(t, app, "alice@example.com")
	dep, ref := mustOwnedDeployment(t, app, "breaker-site", alice)
	mustWebhook(t, app, dep.Id, dead.URL, forms.WebhookGeneric, true, forms.EventDeploymentUpdated)
	mustWebhook(t, app, dep.Id, live.URL, forms.WebhookGeneric, true, forms.EventSubmission)
	for range 20 {
		mustEnqueue(t, app, ref, forms.EventDeploymentUpdated, nil, 1)
	}
	return app, dead, live, ref
}

// breakerDeliverer runs on clock, gives up on a request after 1s (wall
// clock: what the dead receiver costs; what is asserted is counted) and
// backs off 1, 2, 4, ... minutes.
func breakerDeliverer(app core.App, clock *fakeClock) *forms.Deliverer {
	d := loopbackDeliverer(app)
	d.Now = clock.Now
	d.Timeout = time.Second
	d.Backoff = func(n int) time.Duration { return time.Minute << (n - 1) }
	return d
}

// windowEnd checks that every delivery to the dead receiver is pending and
// none is due before one common time, which it returns: the end of the
// receiver's backoff window, as persisted in next_attempt_at.
func windowEnd(t *testing.T, app core.App, url string) time.Time {
	t.Helper()
	rows := deliveries(t, app, "url = {:u}", map[string]any{"u": url})
	if len(rows) != 20 {
		t.Fatalf("%d deliveries to the dead receiver, want 20", len(rows))
	}
	var end time.Time
	for i, rec := range rows {
		r := forms.DeliveryOf(rec)
		next := r.NextAttemptAt()
		if r.Status() != forms.DeliveryPending {
			t.Fatalf("delivery %v not pending", r.FieldsData())
		}
		if i == 0 || next.Before(end) {
			end = next
		}
	}
	return end
}

func runOnceCount(t *testing.T, d *forms.Deliverer) int {
	t.Helper()
	n, err := d.RunOnce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestDeliveryBreakerOneAttemptPerWindow: once a receiver has failed to
// answer, its 20 due deliveries cost it at most one attempt per backoff
// window (the window's end persisted in next_attempt_at, so a restarted
// deliverer keeps it), the windows grow, and the account's other receiver
// is delivered meanwhile. Before, every RunOnce attempted all 20 (20
// sender timeouts per retry round) and each delivery kept its own clock.
func TestDeliveryBreakerOneAttemptPerWindow(t *testing.T) {
	t.Parallel()
	app, dead, live, ref := breakerFixture(t)
	mustEnqueue(t, app, ref, forms.EventSubmission, testSubmission(), 1) // to the live receiver
	t0 := time.Now().Add(time.Second).UTC().Truncate(time.Millisecond)
	clock := &fakeClock{t: t0}
	d := breakerDeliverer(app, clock)

	// Before the first timeout comes back the receiver is not known to be
	// down: at most the 4 senders' requests reach it, then it opens.
	runOnceCount(t, d)
	if n := dead.hits.Load(); n < 1 || n > 4 {
		t.Fatalf("the dead receiver got %d requests in the first round, want 1 to 4 (the senders in flight before it failed)", n)
	}
	if n := len(live.got()); n != 1 {
		t.Fatalf("the live receiver got %d requests, want 1", n)
	}

	end := windowEnd(t, app, dead.URL)
	if end != t0.Add(time.Minute) {
		t.Fatalf("the dead receiver's deliveries are due from %v, want %v (one minute after the failure)", end, t0.Add(time.Minute))
	}
	prevWindow := time.Minute
	for round := 1; round <= 4; round++ {
		if round == 3 { // a restart: the window persists in the database
			d = breakerDeliverer(app, clock)
		}
		before := dead.hits.Load()
		// Inside the window: nothing reaches the dead receiver, the live
		// one gets what is queued for it.
		clock.Set(end.Add(-time.Second))
		mustEnqueue(t, app, ref, forms.EventSubmission, testSubmission(), 1)
		if n := runOnceCount(t, d); n != 1 {
			t.Fatalf("round %d, inside the window: %d requests, want 1 (the live receiver's)", round, n)
		}
		if n := len(live.got()); n != round+1 {
			t.Fatalf("round %d: the live receiver got %d requests, want %d", round, n, round+1)
		}
		// At its end: one probe.
		clock.Set(end)
		runOnceCount(t, d)
		if n := dead.hits.Load() - before; n != 1 {
			t.Fatalf("round %d: the dead receiver got %d requests in its window, want 1", round, n)
		}
		next := windowEnd(t, app, dead.URL)
		window := next.Sub(end)
		if window < prevWindow || round < 3 && window != 2*prevWindow {
			t.Fatalf("round %d: window %v after %v, want it doubled (and never shorter after a restart)", round, window, prevWindow)
		}
		end, prevWindow = next, window
	}
	attempts := 0
	for _, r := range deliveries(t, app, "url = {:u}", map[string]any{"u": dead.URL}) {
		attempts += forms.DeliveryOf(r).Attempts()
	}
	if int64(attempts) != dead.hits.Load() || attempts > 8 {
		t.Fatalf("%d attempts recorded for %d requests, want the same and at most 8", attempts, dead.hits.Load())
	}
}

// TestDeliveryBreakerSuccessDrains: when the receiver answers its probe,
// it is closed again and its whole backlog is sent in the same run; the
// deliveries that waited behind the probe did not use up attempts. Before,
// each of the 20 deliveries spent an attempt while the receiver was down.
func TestDeliveryBreakerSuccessDrains(t *testing.T) {
	t.Parallel()
	app, dead, _, _ := breakerFixture(t)
	t0 := time.Now().Add(time.Second).UTC().Truncate(time.Millisecond)
	clock := &fakeClock{t: t0}
	d := breakerDeliverer(app, clock)
	runOnceCount(t, d)
	tried := dead.hits.Load()

	dead.down.Store(false)
	d.Timeout = time.Minute // answers now come, however loaded the machine
	clock.Set(windowEnd(t, app, dead.URL))
	if n := runOnceCount(t, d); n != 20 {
		for _, rec := range deliveries(t, app, "url = {:u}", map[string]any{"u": dead.URL}) {
			r := forms.DeliveryOf(rec)
			t.Logf("%s %s attempts %d next %s error %q", r.Id, r.Status(), r.Attempts(), r.NextAttemptAt(), r.LastError())
		}
		t.Fatalf("the run after the window made %d requests, want 20: the probe, then the whole backlog (%d before)", n, tried)
	}
	firstTime := 0
	for _, rec := range deliveries(t, app, "url = {:u}", map[string]any{"u": dead.URL}) {
		r := forms.DeliveryOf(rec)
		if r.Status() != forms.DeliveryDelivered {
			t.Fatalf("delivery %v not delivered", r.FieldsData())
		}
		if r.Attempts() == 1 {
			firstTime++
		}
	}
	if want := 20 - int(tried); firstTime != want || firstTime < 16 {
		t.Fatalf("%d deliveries delivered at their first attempt, want %d, at least 16 (all but the %d tried while it was down)",
			firstTime, want, tried)
	}
	if n := runOnceCount(t, d); n != 0 {
		t.Fatalf("%d requests after the drain", n)
	}
}

// TestDeliveryBacklogCap: a webhook keeps at most MaxPendingDeliveries
// pending deliveries; queueing past that marks its oldest pending ones
// failed with a clear reason, and other webhooks' deliveries are left
// alone. Before, the queue grew without bound.
func TestDeliveryBacklogCap(t *testing.T) {
	t.Parallel()
	app := newHookApp(t)
	alice := mustUser(t, app, "alice@example.com")
	dep, ref := mustOwnedDeployment(t, app, "backlog-site", alice)
	full := mustWebhook(t, app, dep.Id, "https://full.example.com/hook", forms.WebhookGeneric, true, forms.EventDeploymentUpdated)
	other := mustWebhook(t, app, dep.Id, "https://other.example.com/hook", forms.WebhookGeneric, true, forms.EventSubmission)
	mustEnqueue(t, app, ref, forms.EventSubmission, testSubmission(), 1)
	const over = 3
	for range forms.MaxPendingDeliveries + over - 1 {
		mustEnqueue(t, app, ref, forms.EventDeploymentUpdated, nil, 1)
	}
	if _, err := forms.QueueTest(app, forms.WebhookOf(full), ref); err != nil { // the tests count too
		t.Fatal(err)
	}
	rows := deliveries(t, app, "webhook = {:w}", map[string]any{"w": full.Id})
	if len(rows) != forms.MaxPendingDeliveries+over {
		t.Fatalf("%d deliveries", len(rows))
	}
	for i, rec := range rows {
		r := forms.DeliveryOf(rec)
		want, reason := forms.DeliveryPending, ""
		if i < over {
			want, reason = forms.DeliveryFailed, "dropped: the receiver's backlog is full"
		}
		if r.Status() != want || r.LastError() != reason || r.Attempts() != 0 {
			t.Fatalf("delivery %d of %d (oldest first): %v, want %s %q", i, len(rows), r.FieldsData(), want, reason)
		}
	}
	if rows := deliveries(t, app, "webhook = {:w} && status = 'pending'", map[string]any{"w": other.Id}); len(rows) != 1 {
		t.Fatalf("%d pending deliveries of the other webhook, want 1", len(rows))
	}
	// A redelivery of a dropped one is queued, and drops the oldest again.
	if _, err := forms.Redeliver(app, forms.DeliveryOf(rows[0])); err != nil {
		t.Fatal(err)
	}
	if n := len(deliveries(t, app, "webhook = {:w} && status = 'pending'", map[string]any{"w": full.Id})); n != forms.MaxPendingDeliveries {
		t.Fatalf("%d pending after a redelivery, want %d", n, forms.MaxPendingDeliveries)
	}
}

// TestDeliveryBreakerManualProbe: a test an owner sends while the
// receiver's window is open goes at once, as its probe (the owner may just
// have fixed it), but only one at a time: of three sent together, one
// reaches the dead receiver and the others wait for the window. Once the
// receiver answers such a test, its backlog drains in the same run.
func TestDeliveryBreakerManualProbe(t *testing.T) {
	t.Parallel()
	app, dead, _, ref := breakerFixture(t)
	t0 := time.Now().Add(time.Second).UTC().Truncate(time.Millisecond)
	clock := &fakeClock{t: t0}
	d := breakerDeliverer(app, clock)
	runOnceCount(t, d)
	end := windowEnd(t, app, dead.URL)
	first := deliveries(t, app, "url = {:u}", map[string]any{"u": dead.URL})[0]
	hook := forms.DeliveryOf(first).WebhookID()
	rec, err := app.FindRecordById(forms.WebhooksCollection, hook)
	if err != nil {
		t.Fatal(err)
	}

	clock.Set(end.Add(-30 * time.Second))
	queueTests(t, app, rec, ref, 3)
	before := dead.hits.Load()
	if n := runOnceCount(t, d); n != 1 || dead.hits.Load()-before != 1 {
		t.Fatalf("%d requests (%d to the dead receiver) for 3 tests sent inside its window, want 1: the probe",
			n, dead.hits.Load()-before)
	}
	if n := runOnceCount(t, d); n != 0 {
		t.Fatalf("%d more requests inside the window", n)
	}

	dead.down.Store(false)
	d.Timeout = time.Minute
	queueTests(t, app, rec, ref, 1)
	// Answered: the window is over for all it held, in the same run.
	if n := runOnceCount(t, d); n != 24 {
		t.Fatalf("%d requests for a test sent inside the window, the receiver up: want 24 (it, then the 23 it freed)", n)
	}
	if n := runOnceCount(t, d); n != 0 {
		t.Fatalf("%d requests after the drain", n)
	}
	if n := len(deliveries(t, app, "url = {:u} && status != 'delivered'", map[string]any{"u": dead.URL})); n != 0 {
		t.Fatalf("%d deliveries not delivered", n)
	}
}
