package hooks

import (
	"context"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
	"sitedrop/sites/domains"
	"sitedrop/sites/publish"
)

// newPublisher returns the publisher of the live manifests when content
// is on S3 (nil with the file store, where no replica can read them).
func (sd *sitedrop) newPublisher() *publish.Publisher {
	if sd.s3 == nil {
		return nil
	}
	return publish.New(publish.Config{
		Objects:    sd.s3,
		Load:       sd.svc.LoadSite,
		Slugs:      sd.allSlugs,
		SiteHost:   sd.hosts.SiteHost,
		ExtraHosts: sd.verifiedHosts,
		Keep:       sd.s3.KeepUntil,
		Retention:  sd.cfg.ReplicaRetention,
		Logger:     sd.app.Logger(),
	})
}

// allSlugs lists every deployment's slug, for the publisher's reconcile.
func (sd *sitedrop) allSlugs() ([]string, error) {
	return sites.AllSlugs(sd.app)
}

// verifiedHosts are the verified custom domains of the deployment with
// id, published beside its own host so replicas serve them too. An error
// keeps the site's documents as they are, and its publish is retried.
func (sd *sitedrop) verifiedHosts(siteID string) ([]string, error) {
	return domains.VerifiedHosts(sd.app, siteID)
}

// republishDomainSite publishes again the site a custom domain record
// belongs to, once its change has committed: a domain verified or
// removed adds or removes a host of the site's published manifest.
func (sd *sitedrop) republishDomainSite(e *core.RecordEvent) error {
	if sd.publisher != nil {
		if dep, err := sites.FindDeployment(e.App, domains.DeploymentIDOf(e.Record)); err == nil {
			sd.Republish(dep.Slug())
		}
	}
	return e.Next()
}

// changing brackets a change of the slugs' deployments (see
// serve.Server.Changing): the site cache forgets them, and once the
// change has committed they are published for the replicas.
func (sd *sitedrop) changing(slugs ...string) (done func()) {
	served := sd.server.Changing(slugs...)
	if sd.publisher == nil {
		return served
	}
	published := sd.publisher.Changing(slugs...)
	return func() { served(); published() }
}

// Republish asks for slug's manifest to be published again: for a change
// that is not a deployment record's, such as a custom domain verified or
// removed (the hosts come from verifiedHosts). Nothing with the file store.
func (sd *sitedrop) Republish(slug string) {
	if sd.publisher != nil {
		sd.publisher.Mark(slug)
	}
}

// runPublisher publishes until ctx ends (see publish.Publisher.Run).
func (sd *sitedrop) runPublisher(ctx context.Context) {
	if sd.publisher != nil {
		sd.publisher.Run(ctx)
	}
}
