package report

import (
	"context"
	"time"
)

// DeployTimeLimit bounds the time a deploy's report may take, after the
// deploy itself and within its work budget; past either the report is
// cut (Truncated).
const DeployTimeLimit = 5 * time.Second

// ForDeploy is the report of a deploy's answer: Build, within
// DeployTimeLimit of ctx (the deploy's work budget, which ends when the
// client goes away). The files are those the deploy received, in memory:
// a digest deploy's contents were loaded from the blob store to deploy
// them, so nothing is read again, nor is _redirects parsed again: the
// redirects and warnings are what sites.CheckRules gave. IsSPA and Title
// are the deployment's as saved: pages without a title get it.
func ForDeploy(ctx context.Context, in Input) Report {
	ctx, cancel := context.WithTimeout(ctx, DeployTimeLimit)
	defer cancel()
	return Build(ctx, in)
}
