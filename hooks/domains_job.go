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
	sd.jobs.bind(sd.app.Cron(), jobDomains, "* * * * *", sd.checkDomains)
}

// runDomainsJob runs the domains job (checkDomains) through the gate.
func (sd *sitedrop) runDomainsJob() { sd.jobs.run(sd.checkDomains) }

// checkDomains checks the pending domains that are due
// (domains.Service.CheckDue).
func (sd *sitedrop) checkDomains() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sd.domainSvc.CheckDue(ctx, domainsPerRun)
}
