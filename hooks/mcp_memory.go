package hooks

import (
	"sync"

	"sitedrop/sites/intake"
)

// mcpAnswerAllowance is what an MCP request reserves for its answer,
// with its body's memory, before anything is dispatched: the tools/list
// answer (10 KiB) and a tool's usual answer (the API's answer recorded,
// the client's copy of it, and the MCP answer that carries it again) fit
// in it. A longer answer (a deploy report listing hundreds of findings)
// counts past it as it is made (see mcpMemory).
const mcpAnswerAllowance = 64 << 10

// mcpMemory is what an MCP request holds of the deploy memory budget for
// its answers: the API's answers its tool records in process and the MCP
// answer it writes. They are made after the tool has run, when refusing
// them would report an action that happened (a deploy made, a site
// deleted) as a failure, and an agent would do it again. So the refusal
// comes before: mcpServe reserves mcpAnswerAllowance with the body, before
// the SDK sees the request, and refuses the request (503) when the
// budget cannot give it. Once the request is dispatched its answers are
// counted, never refused: from the allowance first, then past the budget
// if need be (the budget sees the memory: other requests wait for it).
// Everything is given back when the request ends (end); an answer counted
// after that (a tool still running when its client went away) is not
// held of the budget, since nothing would give it back.
type mcpMemory struct {
	lease *intake.Lease
	mu    sync.Mutex // guards the fields below and the lease's growth
	// allowance is what was reserved for the answers and is not used yet.
	allowance int64
	ended     bool
}

// count holds n more bytes of the answers; see mcpMemory. A nil m counts
// nothing.
func (m *mcpMemory) count(n int64) {
	if m == nil || n <= 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ended {
		return
	}
	from := min(n, m.allowance)
	m.allowance -= from
	if n -= from; n > 0 {
		m.lease.HoldPastBudget(n)
	}
}

// end gives back everything the request held (its lease too): the
// request is over.
func (m *mcpMemory) end() {
	m.mu.Lock()
	m.ended = true
	m.mu.Unlock()
	m.lease.End()
}
