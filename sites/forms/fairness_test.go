package forms_test

import (
	"context"
	"net/http"
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
	mu    sync.Mutex
	order []string
	seen  chan struct{} // a request reached "bob"
}

func (a *arrivals) add(who string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.order = append(a.order, who)
	if who == "bob" {
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
	seen := &arrivals{seen: make(chan struct{}, 1)}
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
		if _, err := forms.QueueTest(app, aliceHook, aliceRef); err != nil {
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
// receiver that never answers hold one sender, not all of them, so
// another account's delivery queued after them is made before the first
// of them even times out. Before, the four shared senders took alice's
// oldest-first, and bob's delivery waited four timeouts, after all 16.
func TestDeliveryQueueFairBetweenAccounts(t *testing.T) {
	t.Parallel()
	app, seen := fairnessFixture(t)
	d := loopbackDeliverer(app)
	d.Timeout = 2 * time.Second // alice's first attempt ends here, making way for her second
	got := runUntilBob(t, d, seen, 30*time.Second)
	alice := 0
	for _, who := range got {
		if who == "bob" {
			break
		}
		alice++
	}
	if alice > 1 {
		t.Fatalf("bob's delivery came after %d of alice's requests (%v), want at most 1 (one sender per account)", alice, got)
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
