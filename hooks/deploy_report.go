package hooks

import (
	"context"
	"time"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
	"sitedrop/sites/report"
	"sitedrop/sites/rules"
)

// reportTimeLimit bounds the time a deploy's quality report may take,
// after the deploy itself; past it the report is cut (truncated).
const reportTimeLimit = 5 * time.Second

// deployReport is the quality report of a deploy's files, for its
// answer. The files are those the deploy received, in memory: a digest
// deploy's contents were loaded from the blob store to deploy them
// (within what --max-body lets a deploy unpack), so nothing is read
// again, nor is _redirects parsed again: redirects and warnings are what
// sites.CheckRules gave for the answer. rec is the deployment as saved:
// its is_spa and its title, which pages without one get. The report
// stops when the client goes away.
func deployReport(e *core.RequestEvent, rec *core.Record, files []sites.File, redirects []rules.Redirect, warnings []rules.Warning) report.Report {
	ctx, cancel := context.WithTimeout(e.Request.Context(), reportTimeLimit)
	defer cancel()
	return report.Build(ctx, report.Input{
		Files:     files,
		Redirects: redirects,
		IsSPA:     rec.GetBool("is_spa"),
		Title:     rec.GetString("title"),
		Warnings:  warnings,
	})
}
