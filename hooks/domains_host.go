package hooks

import (
	"sync/atomic"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/hooks/server/certs"
	"sitedrop/sites"
	"sitedrop/sites/domains"
)

// bindDomainTable keeps domains.Table, the custom domains' routes that the
// front door answers from (server.DomainRoutes), in step with the records
// once a change is committed: a saved or deleted domain drops it, and so
// do a deleted deployment and a slug edited (domains.MovesRoutes), not
// every deploy. A released domain's certificate goes from certs' cache, a
// newly verified one's is ordered at once, replicas hear of the domains.
func bindDomainTable(app core.App, table *domains.Table, tlsCerts *atomic.Pointer[certs.Manager], pub *sitePublisher) {
	drop := func(e *core.RecordEvent) error {
		table.Invalidate()
		return e.Next()
	}
	app.OnRecordAfterCreateSuccess(domains.Collection).BindFunc(drop)
	app.OnRecordAfterUpdateSuccess(domains.Collection).BindFunc(drop)
	app.OnRecordAfterDeleteSuccess(domains.Collection, sites.DeploymentsCollection).BindFunc(drop)
	app.OnRecordAfterUpdateSuccess(sites.DeploymentsCollection).BindFunc(func(e *core.RecordEvent) error {
		if domains.MovesRoutes(e.Record) {
			table.Invalidate()
		}
		return e.Next()
	})
	// A released domain's certificate goes at once, not at the restart.
	forget := forgetReleasedCertificate(table, tlsCerts)
	app.OnRecordAfterUpdateSuccess(domains.Collection).BindFunc(forget)
	app.OnRecordAfterDeleteSuccess(domains.Collection).BindFunc(forget)
	// A verified domain's certificate is ordered at once, not at its first visit.
	obtain := obtainVerifiedCertificate(tlsCerts)
	app.OnRecordAfterCreateSuccess(domains.Collection).BindFunc(obtain)
	app.OnRecordAfterUpdateSuccess(domains.Collection).BindFunc(obtain)
	// Replicas serve a site at its verified domains too (see newPublisher).
	app.OnRecordAfterCreateSuccess(domains.Collection).BindFunc(pub.republishDomainSite)
	app.OnRecordAfterUpdateSuccess(domains.Collection).BindFunc(pub.republishDomainSite)
	app.OnRecordAfterDeleteSuccess(domains.Collection).BindFunc(pub.republishDomainSite)
}

// forgetReleasedCertificate is the record hook that drops from the
// certificate cache (once --https has built it) the certificate of a
// domain the server no longer serves: the record's domain (before and
// after an update), once the change is committed and the domain table
// dropped (bound after the table's hook), unless it is still verified (on
// another deployment). A deleted deployment's domains are deleted with
// it, each through this hook.
func forgetReleasedCertificate(table *domains.Table, tlsCerts *atomic.Pointer[certs.Manager]) func(*core.RecordEvent) error {
	return func(e *core.RecordEvent) error {
		m := tlsCerts.Load()
		if m == nil {
			return e.Next()
		}
		for _, name := range table.Released(e.Record) {
			m.Forget(name)
		}
		return e.Next()
	}
}

// obtainVerifiedCertificate is the record hook that has the certificate
// manager (once --https has built it) order the certificate of a domain
// that a save made verified, whichever path verified it (the API's or the
// page's check, the job, the dashboard): in the background, within the
// hour's budget of new certificates (see certs.Manager.Obtain), so that
// the domain's first visitor does not wait for the order. It runs once the
// change is committed and the domain table dropped (bound after the
// table's hook), so the manager's decision sees the domain verified.
func obtainVerifiedCertificate(tlsCerts *atomic.Pointer[certs.Manager]) func(*core.RecordEvent) error {
	return func(e *core.RecordEvent) error {
		if m := tlsCerts.Load(); m != nil {
			if name, ok := domains.NewlyVerified(e.Record); ok {
				m.Obtain(name)
			}
		}
		return e.Next()
	}
}
