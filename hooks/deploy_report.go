package hooks

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
	"sitedrop/sites/report"
	"sitedrop/sites/rules"
)

// reportTimeLimit bounds the time a deploy's quality report may take,
// after the deploy itself and within its work budget (see deployWork);
// past either the report is cut (truncated).
const reportTimeLimit = 5 * time.Second

// deployReport is the quality report of a deploy's files, for its
// answer. The files are those the deploy received, in memory: a digest
// deploy's contents were loaded from the blob store to deploy them
// (within what --max-body lets a deploy unpack), so nothing is read
// again, nor is _redirects parsed again: redirects and warnings are what
// sites.CheckRules gave for the answer. rec is the deployment as saved:
// its is_spa and its title, which pages without one get. The report
// stops when ctx (the deploy's work budget, which ends when the client
// goes away) is done.
func deployReport(ctx context.Context, rec *core.Record, files []sites.File, redirects []rules.Redirect, warnings []rules.Warning) report.Report {
	ctx, cancel := context.WithTimeout(ctx, reportTimeLimit)
	defer cancel()
	return report.Build(ctx, report.Input{
		Files:     files,
		Redirects: redirects,
		IsSPA:     sites.DeploymentOf(rec).IsSPA(),
		Title:     sites.DeploymentOf(rec).Title(),
		Warnings:  warnings,
	})
}

// The work budget of one deploy, from the moment it has its slot (its
// body read) to its answer: validating the files, hashing the password,
// the rule files, compressing and storing, and the report (which gets
// what is left of it, reportTimeLimit at most). Anonymous deploys have
// less: 8 s of wall clock, which with parallel compression on 2 cores is
// about the 10 s of CPU one anonymous deploy was measured to cost. See
// deployWork.
const (
	keyedDeployWork = 2 * time.Minute
	anonDeployWork  = 8 * time.Second
)

// deployWork starts the work budget of a deploy (anon: an anonymous
// one): a context that ends at the budget's end or when the client goes
// away. The deploy checks it between its steps and between files; past
// it, nothing is committed (see overWorkBudget), and the report, which
// comes after the commit, is cut.
func (g *bodyGuards) deployWork(e *core.RequestEvent, anon bool) (context.Context, context.CancelFunc, time.Duration) {
	limit := g.keyedDeployWork
	if anon {
		limit = g.anonDeployWork
	}
	ctx, cancel := context.WithTimeout(e.Request.Context(), limit)
	return ctx, cancel, limit
}

// workCheck is nil while ctx, a deploy's work budget of limit, lasts;
// see overWorkBudget.
func workCheck(e *core.RequestEvent, ctx context.Context, limit time.Duration) error {
	return overWorkBudget(e, ctx, limit, ctx.Err())
}

// overWorkBudget turns err, when the deploy's work budget (ctx, of limit)
// ran out and caused it, into a 503 with Retry-After that says so:
// nothing was deployed, and the same deploy may fit when the server is
// less busy. Any other error (a slug taken meanwhile, the slot limit, a
// store failure), even past the deadline, and a client that went away
// are returned as they are.
func overWorkBudget(e *core.RequestEvent, ctx context.Context, limit time.Duration, err error) error {
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || !errors.Is(ctx.Err(), context.DeadlineExceeded) || e.Request.Context().Err() != nil {
		return err
	}
	return &apiError{
		Status:     http.StatusServiceUnavailable,
		Message:    fmt.Sprintf("Deploy took too long: a deploy must be processed within %s, and nothing was deployed; try again, or deploy fewer or smaller files", limit),
		RetryAfter: memoryRetryAfter,
	}
}
