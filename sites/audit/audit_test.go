package audit

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// Only names an account's actor when its requests in flight agree on the
// address, and no one once they have left.
func TestInflightOnly(t *testing.T) {
	var f Inflight
	who := func(id string) func() string { return func() string { return id } }
	leaveA := f.Enter("192.0.2.1", who("alice"))
	leaveAnon := f.Enter("192.0.2.9", who(""))
	defer leaveAnon()
	if a, ok := f.Only("alice"); !ok || a != User("alice", "192.0.2.1") {
		t.Fatalf("Only(alice) = %+v, %v", a, ok)
	}
	if _, ok := f.Only("bob"); ok {
		t.Fatal("bob has no request in flight")
	}
	leaveA2 := f.Enter("192.0.2.1", who("alice")) // a second tab, same address
	if _, ok := f.Only("alice"); !ok {
		t.Fatal("two requests from one address are not ambiguous")
	}
	leaveB := f.Enter("198.51.100.7", who("alice")) // and another address
	if a, ok := f.Only("alice"); ok {
		t.Fatalf("two addresses: Only guessed %+v", a)
	}
	leaveB()
	leaveA()
	leaveA2()
	if _, ok := f.Only("alice"); ok {
		t.Fatal("alice's requests have left")
	}
	// a caller learnt late (auth after the middleware) counts when asked
	id := ""
	leave := f.Enter("203.0.113.5", func() string { return id })
	defer leave()
	if _, ok := f.Only("carol"); ok {
		t.Fatal("not known yet")
	}
	id = "carol"
	if a, ok := f.Only("carol"); !ok || a.IP != "203.0.113.5" {
		t.Fatalf("Only(carol) = %+v, %v", a, ok)
	}
}

// The actor is read from the context when the entry is written, not when
// the context was made.
func TestActorOfIsLazy(t *testing.T) {
	if _, ok := ActorOf(context.Background()); ok {
		t.Fatal("a bare context has an actor")
	}
	a := Anonymous("192.0.2.1")
	ctx := WithActor(context.Background(), func() Actor { return a })
	a = User("alice", "192.0.2.1")
	if got, ok := ActorOf(ctx); !ok || got != a {
		t.Fatalf("ActorOf = %+v, %v", got, ok)
	}
}

// Details larger than MaxDetailsBytes are replaced, never stored whole.
func TestBoundDetails(t *testing.T) {
	small, _ := json.Marshal(boundDetails(map[string]any{"slug": "a"}))
	if string(small) != `{"slug":"a"}` {
		t.Fatalf("small details: %s", small)
	}
	big, _ := json.Marshal(boundDetails(map[string]any{"x": strings.Repeat("a", MaxDetailsBytes)}))
	if string(big) != `{"truncated":true}` {
		t.Fatalf("big details: %s", big)
	}
	bad, _ := json.Marshal(boundDetails(map[string]any{"f": func() {}}))
	if string(bad) != `{"truncated":true}` {
		t.Fatalf("details that are not JSON: %s", bad)
	}
}
