package hooks

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites/intake"
)

// An MCP request's answers count from the allowance reserved before it
// was dispatched, then past the budget, never refused; the budget sees
// them (others wait) until the request ends, and an answer counted after
// the end (a tool outliving its request) holds nothing that would never
// be given back.
func TestMCPMemoryCount(t *testing.T) {
	e := &core.RequestEvent{}
	e.Request = httptest.NewRequest(http.MethodPost, "/mcp", nil)
	e.Response = httptest.NewRecorder()
	b := intake.NewBudget(1000)
	m := &mcpMemory{lease: b.NewLease(e.Request.Context(), 0)}
	if err := m.lease.Reserve(300); err != nil { // the body's 100, and the allowance
		t.Fatal(err)
	}
	m.allowance = 200
	for _, step := range []struct {
		count, inUse int64
	}{
		{150, 300},  // within the allowance
		{50, 300},   // the allowance used up
		{900, 1200}, // past the budget: counted, not refused
		{0, 1200},
	} {
		m.count(step.count)
		if n := b.InUse(); n != step.inUse {
			t.Fatalf("after counting %d: %d bytes in use, want %d", step.count, n, step.inUse)
		}
	}
	if b.Take(t.Context(), 1, 0) {
		t.Fatal("a reservation went through with the budget past its maximum")
	}
	m.end()
	if n := b.InUse(); n != 0 {
		t.Fatalf("%d bytes in use after the request ended", n)
	}
	m.count(500)
	if n := b.InUse(); n != 0 {
		t.Fatalf("%d bytes in use after counting past the request's end", n)
	}
	var none *mcpMemory // no MCP request: an in-process client without one
	none.count(10)
}
