package intake

import "sync"

// AnswerMemory is what a request holds of the memory budget for the
// answers it makes after it was dispatched (an MCP request: the API's
// answers its tools record in process and the answer it writes). They
// are made after an action ran, when refusing them would report an
// action that happened (a deploy made, a site deleted) as a failure, and
// a client would do it again. So the refusal comes before: the caller
// reserves an allowance on the lease with the body, before dispatching,
// and refuses the request when the budget cannot give it (Allow sets
// it). Once the request is dispatched its answers are counted, never
// refused (Count): from the allowance first, then past the budget if need
// be (HoldPastBudget: the budget sees the memory, other requests wait for
// it). Everything is given back when the request ends (End); an answer
// counted after that (a tool still running when its client went away) is
// not held of the budget, since nothing would give it back.
type AnswerMemory struct {
	lease *Lease
	mu    sync.Mutex // guards the fields below and the lease's growth
	// allowance is what was reserved for the answers and is not used yet.
	allowance int64
	ended     bool
}

// NewAnswerMemory counts a request's answers on its lease, which it ends
// (End).
func NewAnswerMemory(lease *Lease) *AnswerMemory {
	return &AnswerMemory{lease: lease}
}

// Lease is the request's lease: its body and allowance are reserved on
// it.
func (m *AnswerMemory) Lease() *Lease { return m.lease }

// Allow records that n bytes were reserved on the lease for the answers.
func (m *AnswerMemory) Allow(n int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.allowance = n
}

// Count holds n more bytes of the answers; see AnswerMemory. A nil m
// counts nothing.
func (m *AnswerMemory) Count(n int64) {
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

// End gives back everything the request held (its lease too): the
// request is over.
func (m *AnswerMemory) End() {
	m.mu.Lock()
	m.ended = true
	m.mu.Unlock()
	m.lease.End()
}
