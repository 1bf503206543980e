package hooks

import (
	"context"
	"time"
)

// jobDomains is the id of the custom domain verification job.
const jobDomains = "sitedropVerifyDomains"

// domainsPerRun bounds the pending domains one run checks.
const domainsPerRun = 50

// bindDomains registers the custom domains' record hooks (the host
// table's invalidation) and the job that checks pending domains every
// minute, each on its own backoff (domains.Backoff), until it is
// verified or has been pending for domains.MaxPending.
func bindDomains(sd *sitedrop) {
	bindDomainTable(sd)
	sd.app.Cron().MustAdd(jobDomains, "* * * * *", func() { sd.runDomainsJob() })
}

// runDomainsJob checks the pending domains that are due
// (domains.Service.CheckDue), unless the app is shutting down.
func (sd *sitedrop) runDomainsJob() {
	if !sd.jobs.enter() {
		return // the app is shutting down
	}
	defer sd.jobs.leave()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sd.domainSvc.CheckDue(ctx, domainsPerRun)
}
