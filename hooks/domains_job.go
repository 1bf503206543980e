package hooks

import (
	"context"
	"time"

	"sitedrop/sites"
	"sitedrop/sites/domains"
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

// runDomainsJob checks the pending domains that are due.
func (sd *sitedrop) runDomainsJob() {
	if !sd.jobs.enter() {
		return // the app is shutting down
	}
	defer sd.jobs.leave()
	due, err := domains.Due(sd.app, time.Now().UTC(), domainsPerRun)
	if err != nil {
		sd.app.Logger().Error("find pending domains", "error", err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for i, rec := range due {
		dep, err := sd.app.FindRecordById(sites.DeploymentsCollection, rec.GetString("deployment"))
		if err != nil {
			continue // deleted meanwhile: its domains went with it
		}
		a, ok := sd.reserveDNS()
		if !ok { // the server's DNS budget is spent: the rest wait for a later run
			sd.app.Logger().Warn("custom domain checks postponed: DNS question budget spent", "postponed", len(due)-i)
			return
		}
		saved, err := sd.checkDomain(ctx, rec, dep.GetString("slug"), a)
		a.done()
		if err != nil {
			sd.app.Logger().Error("check custom domain", "domain", rec.GetString("domain"), "error", err)
			continue
		}
		if s := saved.GetString("status"); s != domains.StatusPending {
			sd.app.Logger().Info("custom domain checked", "domain", saved.GetString("domain"), "status", s,
				"reason", saved.GetString("reason"))
		}
	}
}
