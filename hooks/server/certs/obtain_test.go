package certs

import (
	"testing"
	"time"
)

// hasCharged reports whether the order budget has charged name this hour.
func (b *orderBudget) hasCharged(name string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.charged[name]
	return ok
}

// ordering reports whether an order Obtain started for name is running.
func (m *Manager) ordering(name string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.obtaining[name] != nil
}

// waitFor polls cond for up to 10 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("still not %s after 10s", what)
		}
	}
}

// TestObtainWithinBudget: Obtain orders a name through the on-demand
// decision, so the order takes its share of the hour's budget as a
// handshake's would; past the budget, or for a name not allowed, nothing
// is ordered. Forget gives an order up; Stop ends the rest and returns.
func TestObtainWithinBudget(t *testing.T) {
	m := testManager(t, 2) // its CA never answers: orders wait for certmagic's retry
	budget := m.budget
	m.Obtain("Second-Site.sites.test.")
	waitFor(t, "charged", func() bool { return budget.hasCharged("second-site.sites.test") })
	if !m.ordering("second-site.sites.test") {
		t.Fatal("no order running for an allowed name within the budget")
	}
	m.Obtain("second-site.sites.test") // already being ordered: nothing more
	// the order took one of the two: one handshake's new certificate is left
	decide := m.sites.OnDemand.DecisionFunc
	if err := decide(t.Context(), "third-site.sites.test"); err != nil {
		t.Fatalf("the second of two: %v", err)
	}
	m.Obtain("bob-site.sites.test") // over the budget
	m.Obtain("nosuch.sites.test")   // not allowed
	for _, name := range []string{"bob-site.sites.test", "nosuch.sites.test"} {
		waitFor(t, "done with "+name, func() bool { return !m.ordering(name) })
		if budget.hasCharged(name) {
			t.Errorf("%s was charged", name)
		}
	}
	m.Forget("second-site.sites.test")
	if m.ordering("second-site.sites.test") {
		t.Error("Forget left the order running")
	}
	m.Obtain("alice-site.sites.test") // in storage or not, Stop ends it
	m.Stop()
	m.Obtain("alice-site.sites.test")
	if m.ordering("alice-site.sites.test") {
		t.Error("an order started after Stop")
	}
}
