package hooks

import (
	"context"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
	"sitedrop/sites/domains"
	"sitedrop/sites/publish"
	"sitedrop/sites/serve"
	"sitedrop/sites/store/s3store"
)

// sitePublisher tells the site cache and, with --store s3://, the
// replicas' published manifests that sites changed.
type sitePublisher struct {
	// server is the site server, whose cache forgets what changed.
	server *serve.Server
	// pub publishes the live manifests to S3; nil with the file store,
	// where no replica can read them.
	pub *publish.Publisher
	// changes tells the replicas that follow the primary (--primary)
	// that the change feed moved; nil with the file store.
	changes *publish.Changes
}

// newSitePublisher returns the site server's cache and, when content is
// on S3, the publisher of the live manifests and the replicas' long polls
// it tells (none with the file store, where no replica can read them).
func newSitePublisher(app core.App, cfg *Config, svc *sites.Service, s3 *s3store.Store, hosts sites.HostSplit, server *serve.Server) *sitePublisher {
	if s3 == nil {
		return &sitePublisher{server: server}
	}
	changes := publish.NewChanges(publish.ChangesConfig{Objects: s3, Logger: app.Logger()})
	return &sitePublisher{server: server, pub: newPublisher(app, cfg, svc, s3, hosts, changes), changes: changes}
}

// newPublisher returns the publisher of the live manifests to s3, which
// tells changes where the feed stands.
func newPublisher(app core.App, cfg *Config, svc *sites.Service, s3 *s3store.Store, hosts sites.HostSplit, changes *publish.Changes) *publish.Publisher {
	return publish.New(publish.Config{
		Objects: s3,
		Load:    svc.LoadSite,
		// every site's slug, and the old slugs renamed sites keep
		// (published as redirects until they are freed)
		Slugs: func() ([]string, error) {
			slugs, err := sites.AllSlugs(app)
			if err != nil {
				return nil, err
			}
			old, err := sites.RedirectSlugs(app)
			return append(slugs, old...), err
		},
		SiteHost: hosts.SiteHost,
		// a site's verified custom domains, published beside its own
		// host so replicas serve them too. An error keeps the site's
		// documents as they are, and its publish is retried.
		ExtraHosts: func(siteID string) ([]string, error) { return domains.VerifiedHosts(app, siteID) },
		// its preview hosts, each published with that version's manifest
		// (svc.LoadSite loads a label too): one document per kept
		// version (--keep-versions, plus those aliases hold) and per
		// alias.
		Previews:  func(site *sites.Site) ([]string, error) { return sites.PreviewLabels(app, site.ID, site.Slug) },
		Keep:      s3.KeepUntil,
		Retention: cfg.ReplicaRetention,
		Changes:   changes,
		Logger:    app.Logger(),
	})
}

// bindChanges binds the replicas' long poll, GET publish.ChangesPath
// (see publish.Changes), with an S3 store only. It is the web host's: the
// front door answers site hosts and custom domains before the router.
// Its waits end as the server starts to shut down, so that they do not
// hold up the drain.
func (p *sitePublisher) bindChanges(se *core.ServeEvent) {
	if p.changes == nil {
		return
	}
	se.Router.GET(publish.ChangesPath, func(e *core.RequestEvent) error {
		p.changes.ServeHTTP(e.Response, e.Request)
		return nil
	})
	se.Router.Any(publish.ChangesPath, methodNotAllowed("GET"))
	if se.Server != nil {
		se.Server.RegisterOnShutdown(p.changes.Close)
	}
}

// changing brackets a change of the slugs' deployments (see
// serve.Server.Changing): the site cache forgets them, and once the
// change has committed they are published for the replicas.
func (p *sitePublisher) changing(slugs ...string) (done func()) {
	served := p.server.Changing(slugs...)
	if p.pub == nil {
		return served
	}
	published := p.pub.Changing(slugs...)
	return func() { served(); published() }
}

// republishDomainSite publishes again the site a custom domain record
// belongs to, once its change has committed: a domain verified or
// removed adds or removes a host of the site's published manifest.
func (p *sitePublisher) republishDomainSite(e *core.RecordEvent) error {
	if p.pub != nil {
		if dep, err := sites.FindDeployment(e.App, domains.DeploymentIDOf(e.Record)); err == nil {
			p.pub.Mark(dep.Slug())
		}
	}
	return e.Next()
}

// settled reports whether every change is published (always, with the
// file store); the collector waits for it (sites.Upkeep.Settled).
func (p *sitePublisher) settled() bool { return p.pub == nil || p.pub.Settled() }

// run publishes until ctx ends (see publish.Publisher.Run).
func (p *sitePublisher) run(ctx context.Context) {
	if p.pub != nil {
		p.pub.Run(ctx)
	}
}
