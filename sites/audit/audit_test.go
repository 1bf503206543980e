package audit

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

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
