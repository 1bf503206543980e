package forms_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"
	"golang.org/x/crypto/bcrypt"

	"sitedrop/sites"
	"sitedrop/sites/forms"
)

// mustUser creates an account (a users record), its password hashed at
// bcrypt's lowest cost (the default one is slow under -race).
func mustUser(t *testing.T, app core.App, email string) *core.Record {
	t.Helper()
	col, err := app.FindCollectionByNameOrId("users")
	if err != nil {
		t.Fatal(err)
	}
	if f, ok := col.Fields.GetByName("password").(*core.PasswordField); ok && f.Cost != bcrypt.MinCost {
		f.Cost = bcrypt.MinCost
		if err := app.Save(col); err != nil {
			t.Fatal(err)
		}
	}
	u := core.NewRecord(col)
	u.SetEmail(email)
	u.SetPassword("correct horse battery")
	if err := app.Save(u); err != nil {
		t.Fatal(err)
	}
	return u
}

// mustOwnedDeployment is mustDeployment owned by the account owner.
func mustOwnedDeployment(t *testing.T, app core.App, slug string, owner *core.Record) (*core.Record, forms.DeploymentRef) {
	t.Helper()
	rec, ref := mustDeployment(t, app, slug)
	rec.Set("owner", owner.Id)
	if err := app.Save(rec); err != nil {
		t.Fatal(err)
	}
	return rec, ref
}

// arrivals records, in order, which receiver each request reached.
type arrivals struct {
	mu     sync.Mutex
	order  []string
	signal string        // the receiver whose requests are signalled on seen
	seen   chan struct{} // a request reached signal
}

// newArrivals returns an empty log that signals requests to signal.
func newArrivals(signal string) *arrivals {
	return &arrivals{signal: signal, seen: make(chan struct{}, 1)}
}

func (a *arrivals) add(who string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.order = append(a.order, who)
	if who == a.signal {
		select {
		case a.seen <- struct{}{}:
		default:
		}
	}
}

func (a *arrivals) snapshot() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.order...)
}

// fairnessFixture queues 16 tests of alice's webhook, whose receiver never
// answers (it hangs until the deliverer's timeout), due a minute before
// the one delivery of bob's webhook, whose receiver answers at once.
func fairnessFixture(t *testing.T) (core.App, *arrivals) {
	t.Helper()
	app := newHookApp(t)
	seen := newArrivals("bob")
	hang := newReceiver(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		seen.add("alice")
		<-r.Context().Done() // never answers: the sender gives up at its timeout
	})
	fast := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		seen.add("bob")
		okAnswer(n, w, r)
	})
	alice, bob := mustUser(t, app, "alice@example.com"), mustUser(t, app, "bob@example.com")
	aliceDep, aliceRef := mustOwnedDeployment(t, app, "alice-site", alice)
	bobDep, bobRef := mustOwnedDeployment(t, app, "bob-site", bob)
	aliceHook := mustWebhook(t, app, aliceDep.Id, hang.URL, forms.WebhookGeneric, true)
	mustWebhook(t, app, bobDep.Id, fast.URL, forms.WebhookGeneric, true, forms.EventSubmission)
	for range 16 {
		if _, err := forms.QueueTest(app, forms.WebhookOf(aliceHook), aliceRef); err != nil {
			t.Fatal(err)
		}
	}
	// Alice's tests were queued first: all of them are older than bob's.
	if _, err := app.NonconcurrentDB().Update(forms.DeliveriesCollection,
		dbx.Params{"next_attempt_at": sites.DBTime(time.Now().Add(-time.Minute))},
		dbx.HashExp{"webhook": aliceHook.Id}).Execute(); err != nil {
		t.Fatal(err)
	}
	mustEnqueue(t, app, bobRef, forms.EventSubmission, testSubmission(), 1)
	for _, r := range deliveries(t, app, "id != ''", nil) {
		if want := map[string]string{aliceDep.Id: alice.Id, bobDep.Id: bob.Id}[r.GetString("deployment")]; r.GetString("account") != want {
			t.Fatalf("delivery of %s is for account %q, want its owner %q", r.GetString("deployment"), r.GetString("account"), want)
		}
	}
	return app, seen
}

// runUntilBob runs d until bob's receiver got its request (or limit) and
// returns the order of arrivals then.
func runUntilBob(t *testing.T, d *forms.Deliverer, seen *arrivals, limit time.Duration) []string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { d.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	select {
	case <-seen.seen:
	case <-time.After(limit):
		t.Fatalf("bob's delivery not made within %v; arrivals %v", limit, seen.snapshot())
	}
	return seen.snapshot()
}

// TestDeliveryQueueFairBetweenAccounts: one account's 16 deliveries to a
// receiver that never answers, queued first, do not take every sender:
// another account's delivery queued after them gets one of the 4 senders
// at once, before any of alice's requests has timed out, so at most 3 of
// hers (the senders it does not need) can reach her receiver before it.
// Before, the four shared senders took alice's oldest-first, and bob's
// delivery waited four timeouts, after all 16. (This once asserted at
// most 1: one sender per account, a rule that left senders idle; alice
// may now use the others, and her requests started after bob's in the
// same round may arrive before his.)
func TestDeliveryQueueFairBetweenAccounts(t *testing.T) {
	t.Parallel()
	app, seen := fairnessFixture(t)
	d := loopbackDeliverer(app)
	d.Timeout = 2 * time.Second // alice's first attempts end here, freeing senders for her next ones
	got := runUntilBob(t, d, seen, 30*time.Second)
	if alice := countBefore(got, "alice", "bob"); alice > 3 {
		t.Fatalf("bob's delivery came after %d of alice's requests (%v), want at most 3 (bob gets a sender at once)", alice, got)
	}
}

// TestDeliveryQueueOneSenderRoundRobin: with a single sender, bob's
// delivery waits for one of alice's attempts to time out, not for her 16:
// the free sender goes to the account served least recently. Alice's
// deliveries stay queued for their next attempts.
func TestDeliveryQueueOneSenderRoundRobin(t *testing.T) {
	t.Parallel()
	app, seen := fairnessFixture(t)
	d := loopbackDeliverer(app)
	d.Senders = 1
	d.Timeout = 300 * time.Millisecond
	d.Backoff = func(int) time.Duration { return time.Hour }
	got := runUntilBob(t, d, seen, 30*time.Second)
	if len(got) < 2 || got[0] != "alice" || got[1] != "bob" {
		t.Fatalf("arrivals %v, want alice's oldest, then bob's", got)
	}
	pending := deliveries(t, app, "status = 'pending' && event = 'test'", nil)
	tried := 0
	for _, r := range pending {
		tried += r.GetInt("attempts")
	}
	if len(pending) != 16 || tried > 2 {
		t.Fatalf("%d of alice's deliveries pending with %d attempts, want 16 with 1 or 2 (the run stopped after bob's)", len(pending), tried)
	}
}

// heldReceiver is a webhook endpoint whose requests wait until the test
// lets them go, one at a time (next) or all at once (Close); it records
// the order of arrivals of every receiver sharing its log and the most
// requests it held at once.
type heldReceiver struct {
	*httptest.Server
	name    string
	log     *arrivals
	next    chan struct{}
	all     chan struct{}
	allOnce sync.Once
	mu      sync.Mutex
	cur     int
	max     int
	changed chan struct{}
}

func newHeldReceiver(t *testing.T, name string, log *arrivals) *heldReceiver {
	t.Helper()
	h := &heldReceiver{name: name, log: log, next: make(chan struct{}), all: make(chan struct{}),
		changed: make(chan struct{}, 1)}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.cur++
		h.max = max(h.max, h.cur)
		h.log.add(h.name) // under mu: arrivals and concurrency agree
		h.mu.Unlock()
		h.poke()
		defer func() {
			h.mu.Lock()
			h.cur--
			h.mu.Unlock()
			h.poke()
		}()
		select {
		case <-h.next:
		case <-h.all:
		case <-r.Context().Done():
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(func() { h.release(); h.Close() })
	return h
}

func (h *heldReceiver) poke() {
	select {
	case h.changed <- struct{}{}:
	default:
	}
}

// release lets every held request, and every later one, answer.
func (h *heldReceiver) release() { h.allOnce.Do(func() { close(h.all) }) }

// concurrency returns how many requests are held now and the most held
// at once so far.
func (h *heldReceiver) concurrency() (cur, most int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cur, h.max
}

// waitHolding waits until the receiver holds n requests at once (limit
// only guards against a hang: what is asserted is the concurrency).
func (h *heldReceiver) waitHolding(t *testing.T, n int, limit time.Duration) {
	t.Helper()
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	for {
		if cur, _ := h.concurrency(); cur >= n {
			return
		}
		select {
		case <-h.changed:
		case <-deadline.C:
			cur, most := h.concurrency()
			t.Fatalf("receiver %s holds %d requests (at most %d at once), never %d; arrivals %v",
				h.name, cur, most, n, h.log.snapshot())
		}
	}
}

// startRun runs d in the background until the test ends.
func startRun(t *testing.T, d *forms.Deliverer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { d.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

// queueTests queues n tests of hook (whose deployment is ref).
func queueTests(t *testing.T, app core.App, hook *core.Record, ref forms.DeploymentRef, n int) {
	t.Helper()
	for range n {
		if _, err := forms.QueueTest(app, forms.WebhookOf(hook), ref); err != nil {
			t.Fatal(err)
		}
	}
}

// countBefore counts the arrivals of who before the first of stop.
func countBefore(order []string, who, stop string) int {
	n := 0
	for _, o := range order {
		if o == stop {
			break
		}
		if o == who {
			n++
		}
	}
	return n
}

// TestDeliveryQueueLoneAccountUsesEverySender: an account alone in the
// queue uses every sender, even for a single slow receiver: its 10
// deliveries reach the receiver 4 at a time (never more). Before, an
// account had at most one request in flight while the 3 other senders
// idled, so a slow receiver's backlog drained at one request per answer.
func TestDeliveryQueueLoneAccountUsesEverySender(t *testing.T) {
	t.Parallel()
	app := newHookApp(t)
	log := newArrivals("bob")
	slow := newHeldReceiver(t, "slow", log)
	alice := mustUser(t, app, "alice@example.com")
	dep, ref := mustOwnedDeployment(t, app, "alone-site", alice)
	queueTests(t, app, mustWebhook(t, app, dep.Id, slow.URL, forms.WebhookGeneric, true), ref, 10)

	d := loopbackDeliverer(app)
	d.Timeout = time.Minute // the receiver answers when told, never by timing out
	type result struct {
		n   int
		err error
	}
	done, ended := make(chan result, 1), make(chan struct{})
	go func() {
		defer close(ended)
		n, err := d.RunOnce(context.Background())
		done <- result{n, err}
	}()
	t.Cleanup(func() { slow.release(); <-ended }) // before the app goes, even on failure
	slow.waitHolding(t, 4, 10*time.Second)
	slow.release()
	if r := <-done; r.n != 10 || r.err != nil {
		t.Fatalf("RunOnce = %d, %v; want 10", r.n, r.err)
	}
	if _, most := slow.concurrency(); most != 4 {
		t.Fatalf("the receiver held at most %d requests at once, want 4 (every sender, no more)", most)
	}
	if n := len(deliveries(t, app, "status = 'delivered'", nil)); n != 10 {
		t.Fatalf("%d deliveries delivered, want 10", n)
	}
}

// TestDeliveryQueueAccountYieldsFreedSender: when an account holds every
// sender (nobody else was waiting) and another account's delivery comes,
// the first sender to come free goes to the newcomer, not to the account
// holding the others, whose deliveries are older: work-conserving, yet
// the cross-account bound (one request's wait) holds.
func TestDeliveryQueueAccountYieldsFreedSender(t *testing.T) {
	t.Parallel()
	app := newHookApp(t)
	log := newArrivals("bob")
	slow := newHeldReceiver(t, "alice", log)
	fast := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		log.add("bob")
		okAnswer(n, w, r)
	})
	alice, bob := mustUser(t, app, "alice@example.com"), mustUser(t, app, "bob@example.com")
	aliceDep, aliceRef := mustOwnedDeployment(t, app, "alice-site", alice)
	bobDep, bobRef := mustOwnedDeployment(t, app, "bob-site", bob)
	queueTests(t, app, mustWebhook(t, app, aliceDep.Id, slow.URL, forms.WebhookGeneric, true), aliceRef, 16)
	mustWebhook(t, app, bobDep.Id, fast.URL, forms.WebhookGeneric, true, forms.EventSubmission)

	d := loopbackDeliverer(app)
	d.Timeout = time.Minute
	startRun(t, d)
	slow.waitHolding(t, 4, 10*time.Second) // alice alone: she gets all 4
	mustEnqueue(t, app, bobRef, forms.EventSubmission, testSubmission(), 1)
	d.Wake()
	slow.next <- struct{}{} // one of alice's requests ends: one sender comes free
	select {
	case <-log.seen:
	case <-time.After(10 * time.Second):
		t.Fatalf("bob's delivery not made; arrivals %v", log.snapshot())
	}
	if n := countBefore(log.snapshot(), "alice", "bob"); n != 4 {
		t.Fatalf("bob's delivery came after %d of alice's requests (%v), want 4: the freed sender goes to bob",
			n, log.snapshot())
	}
}

// TestDeliveryQueueReceiverYieldsFreedSender: inside one account, a
// receiver holding every sender does not keep them from the account's
// other receivers: the first sender to come free goes to the receiver
// with the fewest requests in flight, so one dead receiver URL delays the
// account's other webhooks by at most one request.
func TestDeliveryQueueReceiverYieldsFreedSender(t *testing.T) {
	t.Parallel()
	app := newHookApp(t)
	log := newArrivals("live")
	dead := newHeldReceiver(t, "dead", log)
	live := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		log.add("live")
		okAnswer(n, w, r)
	})
	alice := mustUser(t, app, "alice@example.com")
	dep, ref := mustOwnedDeployment(t, app, "two-hooks-site", alice)
	queueTests(t, app, mustWebhook(t, app, dep.Id, dead.URL, forms.WebhookGeneric, true, forms.EventDeploymentUpdated), ref, 16)
	mustWebhook(t, app, dep.Id, live.URL, forms.WebhookGeneric, true, forms.EventSubmission)

	d := loopbackDeliverer(app)
	d.Timeout = time.Minute
	startRun(t, d)
	dead.waitHolding(t, 4, 10*time.Second)
	mustEnqueue(t, app, ref, forms.EventSubmission, testSubmission(), 1) // to the live receiver only
	d.Wake()
	dead.next <- struct{}{}
	select {
	case <-log.seen:
	case <-time.After(10 * time.Second):
		t.Fatalf("the live receiver's delivery not made; arrivals %v", log.snapshot())
	}
	if n := countBefore(log.snapshot(), "dead", "live"); n != 4 {
		t.Fatalf("the live receiver's delivery came after %d requests to the dead one (%v), want 4", n, log.snapshot())
	}
}
