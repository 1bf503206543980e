package hooks

import (
	"net/http"
	"sync/atomic"
	"time"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/hooks/internal/lifecycle"
	"sitedrop/hooks/pages"
	"sitedrop/hooks/server"
	"sitedrop/hooks/server/certs"
	"sitedrop/hooks/server/metrics"
	"sitedrop/sites"
	"sitedrop/sites/abuse"
	"sitedrop/sites/analytics"
	"sitedrop/sites/analytics/statsdb"
	"sitedrop/sites/domains"
	"sitedrop/sites/forms"
	"sitedrop/sites/intake"
	"sitedrop/sites/publish"
	"sitedrop/sites/ratelimit"
	"sitedrop/sites/serve"
	"sitedrop/sites/store"
	"sitedrop/sites/store/s3store"
	"sitedrop/sites/usage"
)

// Register binds sitedrop to app: routes, record hooks and jobs. cfg is
// read when the app bootstraps (at once if it already has), so flags may
// fill it after Register.
func Register(app core.App, cfg *Config) error {
	_, err := register(app, cfg)
	return err
}

// MustRegister is Register that panics on error.
func MustRegister(app core.App, cfg *Config) {
	if err := Register(app, cfg); err != nil {
		panic(err)
	}
}

// register is Register, and hands back what it built (filled in when the
// app bootstraps) for the tests. The services need the data dir, known
// once the app has bootstrapped: they are built and bound then, once.
func register(app core.App, cfg *Config) (*built, error) {
	bindLogEscape(app) // the bootstrap's own log lines too
	b := new(built)
	setUp := func() error {
		s, err := build(app, cfg)
		if err != nil {
			return err
		}
		*b = *s
		return nil
	}
	if app.IsBootstrapped() {
		if err := setUp(); err != nil {
			return nil, err
		}
		return b, nil
	}
	var done bool
	app.OnBootstrap().BindFunc(func(e *core.BootstrapEvent) error {
		if err := e.Next(); err != nil {
			return err
		}
		if done { // bootstrapped again after a reset: already bound
			return nil
		}
		if err := setUp(); err != nil {
			return err
		}
		done = true
		return nil
	})
	return b, nil
}

// built is what build made, handed back to the tests (register) so they
// can reach the services the bindings were given. sitedrop itself never
// reads it: every binding receives the services it uses.
type built struct {
	app        core.App
	cfg        *Config
	svc        *sites.Service
	server     *serve.Server
	s3         *s3store.Store
	publisher  *publish.Publisher
	analytics  *analytics.Aggregator
	statsFlush *statsdb.Flusher
	upkeep     *sites.Upkeep
	notifier   *forms.Notifier
	deliverer  *forms.Deliverer
	jobs       *lifecycle.Gate
	gate       *intake.Gate
	settings   *sites.InstanceSettings
	hosts      sites.HostSplit
	proxies    server.TrustedProxies
	sessions   *pages.Sessions
	domainSvc  *domains.Service
	blocks     *sites.Blocklist
	tlsCerts   *atomic.Pointer[certs.Manager]
	metrics    *metrics.Metrics
	reports    *abuse.Reports
	*siteHosts
	*intake.Guards
}

// build builds the services from the configuration, in dependency order,
// then binds them: record hooks, jobs, the lifecycle and, when the app
// serves, the routes. Every service is a local, so the compiler refuses a
// service that is handed another before that one is built: a method value
// such as proxies.ClientIP is always taken from a finished value. (The
// site server was once handed sd.proxies.ClientIP before sd.proxies was
// set, and so counted every visitor behind a load balancer as the load
// balancer.) Settings parsed from flags come first, so a bad one fails
// before anything is opened.
func build(app core.App, cfg *Config) (*built, error) {
	cfg.withDefaults()

	// Settings.
	proxies, err := server.ParseProxies(cfg.TrustedProxies)
	if err != nil {
		return nil, err
	}
	publicIPs, err := domains.ParsePublicIPs(cfg.PublicIPs)
	if err != nil {
		return nil, err
	}
	hosts := sites.NewHostSplit(cfg.Domain, cfg.SitesDomain)
	webHost, sitesDomain := hosts.Domains()

	// The metrics: counted always (atomic adds), served with --metrics
	// (a flag of the serve command, read in OnServe).
	m := metrics.New()

	// The sites and their serving.
	blobs, s3, err := openStore(app, cfg)
	if err != nil {
		return nil, err
	}
	if c, ok := blobs.(interface{ CountErrors(store.ErrorCounter) }); ok {
		c.CountErrors(m)
	}
	reserved := cfg.ReservedSlugs
	if label := sites.WebHostLabel(cfg.Domain, cfg.SitesDomain); label != "" {
		// the web host lies under the sites domain: no site may take its name
		reserved = append(reserved[:len(reserved):len(reserved)], label)
	}
	blocks := sites.NewBlocklist(app)
	svc := sites.NewService(app, blobs, sites.ServiceConfig{
		Blocklist:     blocks,
		FreeSlots:     cfg.FreeSlots,
		KeepVersions:  cfg.KeepVersions,
		ProSlots:      cfg.ProSlots,
		ReservedSlugs: reserved,
		SubmitURL:     func(id string) string { return cfg.links().Web() + "/submit/" + id },
	})
	serverOpts := serve.ServerOptions{
		ContentCacheBytes: cfg.ContentCache,
		ClientIP:          proxies.ClientIP, // analytics and the gate's attempt limits
		GateCookieTTL:     cfg.ProtectCookieTTL,
		SecureCookies:     cfg.siteOverTLS,
		CacheCounter:      m,
	}
	stats, statsFlush := newAnalytics(app, cfg.Analytics, s3) // with S3: the replicas' counts merged
	if stats != nil {
		serverOpts.Recorder = stats
	}
	siteServer := serve.NewServer(svc.LoadSite, blobs, serverOpts)
	pub := newSitePublisher(app, cfg, svc, s3, hosts, siteServer)
	upkeep := &sites.Upkeep{Sites: svc, Grace: cfg.GCGrace, Settled: pub.settled}

	// Custom domains.
	domainTable := domains.NewTable(app)
	domainSvc := domains.NewService(app, domains.Config{
		FreeLimit: cfg.DomainsFree,
		ProLimit:  cfg.DomainsPro,
		Rules:     domains.Rules{WebHost: webHost, SitesDomain: sitesDomain},
		PublicIPs: publicIPs,
		Resolvers: func() []string { return cfg.Serve.DNSResolvers }, // the serve flags come later
		SiteHost:  hosts.SiteHost,
	})
	usageSvc := usage.New(app, svc)
	reports := abuse.New(app, abuse.Config{Hosts: hosts, Domains: domainTable, Mail: reportsMail(app, cfg)})
	domainDesk := &domainDesk{svc: domainSvc, actions: ratelimit.New(domainActionsPerMinute, time.Minute), cfg: cfg}
	front := &siteHosts{app: app, cfg: cfg, hosts: hosts, server: siteServer, domains: domainTable, metrics: m}
	// tlsCerts is the certificate manager once --https has built it
	// (server.TLS.Prepare); nil without TLS. The domains' record hooks read
	// it to drop the certificate of a released domain and to order that of
	// a verified one.
	tlsCerts := new(atomic.Pointer[certs.Manager])

	// The web host's limits and sessions.
	gate := newDeployGate(cfg)
	m.DeploySlots(gate.InUse, gate.Slots())
	gate.Observe(m)
	webhookSends := ratelimit.New(webhookSendsPerMinute, time.Minute)
	uploads := ratelimit.New(int(uploadBytesFactor*cfg.MaxBody), time.Hour)
	guards := newBodyGuards(cfg)
	// The anonymous deploys' rules: the flags, overridden at run time by
	// the sitedrop settings record, whose limits the counters take on
	// each change.
	settings := sites.NewInstanceSettings(app, cfg.anonPolicy())
	settings.OnAnonChange(func(p sites.AnonPolicy) {
		gate.Anon.SetLimit(p.DeploysPerHour, time.Hour)
		guards.AnonStorage.SetLimit(int(min(p.StoragePerIP, 1<<62)), p.TTL)
	})
	sessions := newSessions(app, cfg)

	// The background senders and jobs.
	deliverer := forms.NewDeliverer(app, cfg.webhookGuard())
	notifier := forms.NewNotifier(app, notificationMail(app, cfg))
	send := &senders{deliverer: deliverer, notifier: notifier, publisher: pub}
	jobs := new(lifecycle.Gate)
	life := new(lifecycle.Lifecycle)
	ref := func(rec *core.Record) forms.DeploymentRef { return deploymentRef(cfg, rec) }

	// Bindings.
	versionRef := func(rec, ver *core.Record, preview bool) forms.DeploymentRef {
		return deploymentVersionRef(cfg, rec, ver, preview)
	}
	bindRecordHooks(app, svc, pub, upkeep, versionRef, send.wake)
	bindAuditHooks(app, proxies.ClientIP)
	bindTakedownHooks(app, cfg)
	bindBanHooks(app, cfg, svc)
	bindAccountRecordHooks(app, sessions)
	bindBlocklistHooks(app, blocks)
	bindSettingsHooks(app, settings)
	bindLifecycle(app, life, send, statsFlush, jobs)
	bindJobs(app, jobs, upkeep, domainSvc, statsFlush)
	bindDomainTable(app, domainTable, tlsCerts, pub)
	bindMetricsHooks(app, m)
	bindReports(app, jobs, reports)
	app.OnServe().BindFunc(func(se *core.ServeEvent) (err error) {
		cfg.learnListenPort(se)
		if fs, ok := blobs.(*store.FSStore); ok && se.Server != nil {
			if err := fs.MakeBlobDirs(); err != nil { // no deploy makes one
				return err
			}
		}
		links := cfg.links() // the listen address is known: the addresses given out
		if err := bindOpenAPI(se, links.Web()); err != nil {
			return err
		}
		// the metrics listen first, so they see every answer of the others
		var ms *metrics.Server
		if se.Server != nil && cfg.Serve.MetricsAddr != "" {
			if ms, err = metrics.Listen(cfg.Serve.MetricsAddr, m); err != nil {
				return err
			}
			defer func() {
				if err != nil {
					ms.Close()
				}
			}()
		}
		// one cap per client, over the main and the plain HTTP listener
		conns := serve.NewConnLimit(cfg.Serve.MaxConnsPerIP, proxies)
		ln, err := server.ListenMain(se, cfg.Serve, conns)
		if err != nil {
			return err
		}
		var ts *server.TLSServing
		if se.Server != nil && cfg.Serve.HTTPSAddr != "" {
			if ts, err = front.tls().Prepare(se, conns); err != nil {
				ln.Close()
				return err
			}
			tlsCerts.Store(ts.Certs)
			if install := se.InstallerFunc; install != nil {
				// PocketBase's install link would leave out the port
				se.InstallerFunc = func(app core.App, su *core.Record, _ string) error {
					return install(app, su, links.Web())
				}
			}
		}
		door := front.front() // the listen address is known: complete
		door.Bind(se.Router)
		if err := door.ServeListener(se, ln, ts != nil); err != nil {
			if ts != nil {
				ts.Close()
			}
			ln.Close()
			return err
		}
		bindWWWRedirect(se, hosts, links)
		se.Router.Bind(deployMetrics(m))
		se.Router.Bind(jsonErrorsMiddleware())
		se.Router.Bind(builtinAuthGuard())
		se.Router.Bind(superuserSignInLimit(proxies.RateKey))
		se.Router.Bind(auditActors(proxies.ClientIP))
		bindWebGuards(se, cfg.Serve.Origins)
		bindHSTS(se, sessions.Secure)

		// The routes.
		auth := &apiAuth{sessions: sessions, deploys: svc}
		deploys := &deployAPI{settings: settings, links: links, deploys: svc, intake: &intake.Deploys{Guards: guards, Gate: gate, MaxBody: cfg.MaxBody, MaxFiles: cfg.MaxFiles}, proxies: proxies, gc: upkeep}
		bindDeployAPI(se.Router, deploys, auth)
		bindVersionsAPI(se.Router, deploys, auth)
		bindSiteControlsAPI(se.Router, deploys, auth)
		bindTakedownAPI(se.Router, deploys)
		bindBanAPI(se.Router, deploys)
		bindAnalyticsAPI(se.Router, auth)
		bindBlobsAPI(se.Router, &blobsAPI{cfg: cfg, deploys: svc, s3: s3, uploads: uploads, guards: guards, gate: gate, blocks: blocks}, auth)
		limits := newAuthLimits()
		signIn := &signInDesk{cfg: cfg, links: links, limits: &limits, proxies: proxies, sessions: sessions, guards: guards, blocks: blocks}
		bindAuthAPI(se.Router, signIn, auth)
		bindSubmitAPI(se.Router, &formPosts{links: links, limit: ratelimit.New(10, time.Minute), guards: guards, sessions: sessions, hosts: hosts, wake: send.wake})
		bindSubmissionsAPI(se.Router, auth)
		bindWebhooksAPI(se.Router, &webhooksAPI{guard: cfg.webhookGuard(), guards: guards}, auth)
		bindDomainsAPI(se.Router, &domainsAPI{desk: domainDesk, guards: guards}, auth)
		bindBlocklistAPI(se.Router, &blocklistAPI{blocks: blocks, guards: guards})
		bindUsageAPI(se.Router, &usageAPI{usage: usageSvc}, auth)
		bindReportAPI(se.Router, &reportDesk{reports: reports, limit: ratelimit.New(reportsPerHour, time.Hour), guards: guards, proxies: proxies, sessions: sessions})
		pub.bindChanges(se)
		api := bindMCP(se.Router, &mcpEndpoint{maxBody: cfg.MaxBody, guards: guards, proxies: proxies})
		pages.Bind(se.Router, pages.Services{
			Sessions: sessions, Guards: guards, Deploys: svc, Domains: domainSvc, Usage: usageSvc,
			DomainStart: domainDesk.start, SiteHost: hosts.SiteHost, Links: links,
			Limits: pages.Limits{MaxFiles: cfg.MaxFiles, MaxBody: cfg.MaxBody, Anon: settings.Anon,
				FreeSlots: cfg.FreeSlots, ProSlots: cfg.ProSlots},
			Gate: gate, WebhookSends: webhookSends, WebhookGuard: cfg.webhookGuard, DeploymentRef: ref, Wake: send.wake,
			Analytics: pageAnalytics(stats == nil), SubmissionsCSV: submissionsCSV, LLMs: llmsTxt(cfg, settings, links),
			SignIn:  signIn.forPages(),
			Answers: pages.Answers{Any: toAPIError, Domain: domainRefusal},
			Moderation: pages.Moderation{
				Sessions: newAdminSessions(app, cfg),
				Reports:  reports, Blocks: blocks, Settings: settings,
			},
		})
		se.Router.Bind(adminNotFoundPage(sessions))

		if err := se.Next(); err != nil {
			if ts != nil {
				ts.Close()
			}
			ln.Close()
			return err
		}
		if se.Server != nil {
			api.Use(se.Server.Handler) // the mux, before the front door wraps it
			if se.Server.Handler != nil {
				// every listener serves this handler: the front door first
				se.Server.Handler = door.Wrap(se.Server.Handler)
			}
		}
		if se.Server == nil { // a test harness, not a real server
			return nil
		}
		var others []*http.Server // beside the main listener, drained with it
		if ms != nil {
			others = append(others, ms.HTTP())
		}
		life.Start()
		if w := cfg.Serve.Banner; w != nil {
			printBanner(w, cfg, links)
		}
		if ts == nil {
			server.BindGracefulShutdown(app, cfg.Serve.ShutdownTimeout, se.Server, ln, others...)
			return nil
		}
		if err := ts.Start(se.Server); err != nil {
			ts.Close()
			return err
		}
		server.BindGracefulShutdown(app, cfg.Serve.ShutdownTimeout, se.Server, ln, append(others, ts.HTTP)...)
		ts.BindCleanup(app)
		return nil
	})

	return &built{
		app: app, cfg: cfg, svc: svc, server: siteServer, s3: s3, publisher: pub.pub,
		analytics: stats, statsFlush: statsFlush, upkeep: upkeep, notifier: notifier,
		deliverer: deliverer, jobs: jobs, gate: gate, settings: settings, hosts: hosts, proxies: proxies,
		sessions: sessions, domainSvc: domainSvc, blocks: blocks, tlsCerts: tlsCerts, metrics: m, reports: reports, siteHosts: front, Guards: guards,
	}, nil
}
