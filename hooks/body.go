package hooks

import (
	"io"

	"github.com/pocketbase/pocketbase/tools/router"

	"sitedrop/sites/intake"
)

// newBodyGuards are the body guards of cfg (--deploy-memory,
// --anon-storage-per-ip, --anon-ttl), reading the request bodies as the
// client sent them (unwrapBody).
func newBodyGuards(cfg *Config) *intake.Guards {
	g := intake.NewGuards(cfg.DeployMemory, cfg.AnonStoragePerIP, cfg.AnonTTL)
	g.Unwrap = unwrapBody
	return g
}

// newDeployGate is the deploy gate of cfg's limits
// (--anon-deploys-per-hour, --deploys-per-minute, --concurrent-deploys).
func newDeployGate(cfg *Config) *intake.Gate {
	return intake.NewGate(cfg.AnonDeploysPerHour, cfg.DeploysPerMinute, cfg.ConcurrentDeploys)
}

// unwrapBody returns the request's original body stream: the router keeps
// a copy of every body for re-reads, which bodies read once do not need.
func unwrapBody(body io.ReadCloser) io.ReadCloser {
	if rr, ok := body.(*router.RereadableReadCloser); ok {
		return rr.ReadCloser
	}
	return body
}
