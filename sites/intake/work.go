package intake

import (
	"context"
	"errors"
	"time"
)

// The work budget of one deploy, from the moment it has its slot (its
// body read) to its answer: validating the files, hashing the password,
// the rule files, compressing and storing, and the report (which gets
// what is left of it, report.DeployTimeLimit at most). Anonymous deploys
// have less: 8 s of wall clock, which with parallel compression on 2
// cores is about the 10 s of CPU one anonymous deploy was measured to
// cost. See Work.
const (
	KeyedDeployWork = 2 * time.Minute
	AnonDeployWork  = 8 * time.Second
)

// Work is the work budget of one deploy: a context that ends at the
// budget's end or when the client goes away. The deploy checks it
// between its steps and between files; past it, nothing is committed
// (see Over), and the report, which comes after the commit, is cut.
type Work struct {
	// Ctx is the budget's context, for the deploy's steps.
	Ctx     context.Context
	request context.Context
	limit   time.Duration
	cancel  context.CancelFunc
}

// StartWork starts the work budget of a deploy of the request whose
// context is request (anon: an anonymous one). End it (defer).
func (g *Guards) StartWork(request context.Context, anon bool) *Work {
	limit := g.KeyedWork
	if anon {
		limit = g.AnonWork
	}
	ctx, cancel := context.WithTimeout(request, limit)
	return &Work{Ctx: ctx, request: request, limit: limit, cancel: cancel}
}

// End releases the budget's timer.
func (w *Work) End() { w.cancel() }

// Check is nil while the budget lasts; see Over.
func (w *Work) Check() error { return w.Over(w.Ctx.Err()) }

// Over is OverWorkBudget of this budget.
func (w *Work) Over(err error) error { return OverWorkBudget(w.request, w.Ctx, w.limit, err) }

// OverWorkBudget turns err, when a deploy's work budget (work, of limit)
// ran out and caused it, into a *WorkBudgetError that says so: nothing
// was deployed, and the same deploy may fit when the server is less
// busy. Any other error (a slug taken meanwhile, the slot limit, a store
// failure), even past the deadline, and a client that went away (its
// request context ended) are returned as they are.
func OverWorkBudget(request, work context.Context, limit time.Duration, err error) error {
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || !errors.Is(work.Err(), context.DeadlineExceeded) || request.Err() != nil {
		return err
	}
	return &WorkBudgetError{Limit: limit}
}
