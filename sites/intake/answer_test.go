package intake

import "testing"

// TestAnswerMemoryCount: a request's answers count from the allowance
// reserved before it was dispatched, then past the budget, never refused;
// the budget sees them (others wait) until the request ends, and an
// answer counted after the end (a tool outliving its request) holds
// nothing that would never be given back.
func TestAnswerMemoryCount(t *testing.T) {
	b := NewBudget(1000)
	m := NewAnswerMemory(b.NewLease(t.Context(), 0))
	if err := m.Lease().Reserve(300); err != nil { // the body's 100, and the allowance
		t.Fatal(err)
	}
	m.Allow(200)
	for _, step := range []struct {
		count, inUse int64
	}{
		{150, 300},  // within the allowance
		{50, 300},   // the allowance used up
		{900, 1200}, // past the budget: counted, not refused
		{0, 1200},
	} {
		m.Count(step.count)
		if n := b.InUse(); n != step.inUse {
			t.Fatalf("after counting %d: %d bytes in use, want %d", step.count, n, step.inUse)
		}
	}
	if b.Take(t.Context(), 1, 0) {
		t.Fatal("a reservation went through with the budget past its maximum")
	}
	m.End()
	if n := b.InUse(); n != 0 {
		t.Fatalf("%d bytes in use after the request ended", n)
	}
	m.Count(500)
	if n := b.InUse(); n != 0 {
		t.Fatalf("%d bytes in use after counting past the request's end", n)
	}
	var none *AnswerMemory // no MCP request: an in-process client without one
	none.Count(10)
}
