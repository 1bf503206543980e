package hooks

import (
	"sync/atomic"
	"time"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/hooks/server"
	"sitedrop/hooks/server/certs"
	"sitedrop/sites"
	"sitedrop/sites/analytics"
	"sitedrop/sites/analytics/statsdb"
	"sitedrop/sites/domains"
	"sitedrop/sites/forms"
	"sitedrop/sites/intake"
	"sitedrop/sites/publish"
	"sitedrop/sites/ratelimit"
	"sitedrop/sites/serve"
	"sitedrop/sites/store/s3store"
)

// sitedrop is what the bindings that have no services of their own yet
// still share: the pages, the record hooks and the jobs. The APIs, the
// front door and the background services' lifecycle are built from it
// once and bound with exactly what they use; what is left is moving out
// the same way. It is built when the app has bootstrapped (the data dir is
// known then), in dependency order (init).
type sitedrop struct {
	app    core.App
	cfg    *Config
	svc    *sites.Service
	server *serve.Server
	// s3 is the blob store when --store is an S3 URL (nil: the file
	// store); the live manifests are published there for replicas.
	s3 *s3store.Store
	// publisher publishes the live manifests to s3 after each change;
	// nil with the file store.
	publisher *publish.Publisher
	// analytics counts the sites' visits; nil with --analytics=false.
	analytics *analytics.Aggregator
	// statsFlush writes the analytics to the database; nil before init.
	statsFlush *statsdb.Flusher
	// gate limits the deploys and holds their processing slots.
	gate *intake.Gate
	// hosts tells site hosts from the web host.
	hosts sites.HostSplit
	// proxies are the trusted reverse proxies (--trusted-proxies).
	proxies server.TrustedProxies
	// webhookSends limits the webhook tests and redeliveries an account
	// queues by hand (webhookSendsPerMinute).
	webhookSends *ratelimit.Limiter
	// deliverer sends queued webhook deliveries.
	deliverer *forms.Deliverer
	// notifyWake nudges the notification mailer.
	notifyWake chan struct{}
	// gcDue is set when content may have become unreferenced.
	gcDue gcFlag
	// jobs keeps the background jobs and the shutdown apart.
	jobs jobGate
	// life starts and stops the background services (bindLifecycle).
	life lifecycle
	// workers are the running senders (startWorkers).
	workers workers
	// uploads bounds the bytes each account uploads with PUT /blobs.
	uploads *ratelimit.Limiter
	// sessions is the browser session service (cookie, user, flashes).
	sessions *sessions
	// kit is what the page handlers share (sessions, form guards).
	kit *pageKit
	// domainHosts routes custom domains' hosts.
	domainHosts *domains.Table
	// domainSvc adds, checks and removes custom domains.
	domainSvc *domains.Service
	// tlsCerts is the certificate manager once --https has built it
	// (server.TLS.Prepare); nil without TLS. Record hooks read it to drop
	// the certificate of a released domain.
	tlsCerts atomic.Pointer[certs.Manager]
	// domainDesk runs the domain actions accounts ask for, within their
	// limit (the API's and the pages').
	domainDesk *domainDesk
	*intake.Guards
}

// Register binds sitedrop to app: routes, record hooks and jobs. cfg is
// read when the app bootstraps (at once if it already has), so flags may
// fill it after Register.
func Register(app core.App, cfg *Config) error {
	_, err := register(app, cfg)
	return err
}

func register(app core.App, cfg *Config) (*sitedrop, error) {
	sd := &sitedrop{app: app, cfg: cfg}
	if app.IsBootstrapped() {
		if err := sd.init(); err != nil {
			return nil, err
		}
	} else {
		app.OnBootstrap().BindFunc(func(e *core.BootstrapEvent) error {
			if err := e.Next(); err != nil {
				return err
			}
			return sd.init()
		})
	}
	bindRecordHooks(sd)
	bindLogEscape(app)
	bindLifecycle(sd)
	bindJobs(sd)
	bindAnalyticsJobs(sd)
	bindDomains(sd)
	app.OnServe().BindFunc(func(se *core.ServeEvent) error {
		sd.cfg.learnListenPort(se)
		if err := bindOpenAPI(sd, se); err != nil { // needs the web URL
			return err
		}
		// one cap per client, over the main and the plain HTTP listener
		conns := serve.NewConnLimit(sd.cfg.Serve.MaxConnsPerIP, sd.proxies)
		ln, err := server.ListenMain(se, sd.cfg.Serve, conns)
		if err != nil {
			return err
		}
		var ts *server.TLSServing
		if se.Server != nil && sd.cfg.Serve.HTTPSAddr != "" {
			if ts, err = sd.tls().Prepare(se, conns); err != nil {
				ln.Close()
				return err
			}
			sd.tlsCerts.Store(ts.Certs)
			if install := se.InstallerFunc; install != nil {
				// PocketBase's install link would leave out the port
				se.InstallerFunc = func(app core.App, su *core.Record, _ string) error {
					return install(app, su, sd.cfg.links().Web())
				}
			}
		}
		front := sd.front() // the listen address is known: complete
		front.Bind(se.Router)
		bindWWWRedirect(sd, se)
		se.Router.Bind(jsonErrorsMiddleware())
		se.Router.Bind(builtinAuthGuard())
		se.Router.Bind(sd.superuserSignInLimit())
		bindWebGuards(sd, se)
		bindHSTS(sd, se)
		auth := &apiAuth{sessions: sd.sessions, deploys: sd.svc}
		deploys := &deployAPI{anonTTL: sd.cfg.AnonTTL, links: sd.cfg.links(), deploys: sd.svc, intake: &intake.Deploys{Guards: sd.Guards, Gate: sd.gate, MaxBody: sd.cfg.MaxBody, MaxFiles: sd.cfg.MaxFiles}, proxies: sd.proxies, gc: &sd.gcDue}
		bindDeployAPI(se.Router, deploys, auth)
		bindVersionsAPI(se.Router, deploys, auth)
		bindAnalyticsAPI(se.Router, auth)
		bindBlobsAPI(se.Router, &blobsAPI{cfg: sd.cfg, deploys: sd.svc, s3: sd.s3, uploads: sd.uploads, guards: sd.Guards, gate: sd.gate}, auth)
		limits := newAuthLimits()
		bindAuthAPI(se.Router, &signInDesk{cfg: sd.cfg, limits: &limits, proxies: sd.proxies, kit: sd.kit}, auth)
		bindSubmitAPI(se.Router, &formPosts{cfg: sd.cfg, limit: ratelimit.New(10, time.Minute), guards: sd.Guards, sessions: sd.sessions, hosts: sd.hosts, wake: sd.wakeWorkers})
		bindSubmissionsAPI(se.Router, auth)
		bindWebhooksAPI(se.Router, &webhooksAPI{cfg: sd.cfg, guards: sd.Guards}, auth)
		bindDomainsAPI(se.Router, &domainsAPI{desk: sd.domainDesk, guards: sd.Guards}, auth)
		site := &siteForms{deploys: sd.svc, kit: sd.kit, sessions: sd.sessions}
		domainPg := &domainPages{siteForms: site, desk: sd.domainDesk, domains: sd.domainSvc, siteHost: sd.hosts.SiteHost}
		bindAccountSitePages(se.Router,
			&sitePages{siteForms: site, cfg: sd.cfg, analytics: sd.pageAnalytics, domains: domainPg},
			&settingsPages{siteForms: site, cfg: sd.cfg, gate: sd.gate},
			&protectionPages{siteForms: site, cfg: sd.cfg},
			&webhookPages{siteForms: site, cfg: sd.cfg, sends: sd.webhookSends, ref: sd.deploymentRef, wake: sd.wakeWorkers})
		bindSiteDomainsPages(se.Router, domainPg)
		api := bindMCP(se.Router, &mcpEndpoint{cfg: sd.cfg, guards: sd.Guards, proxies: sd.proxies})
		bindPages(se.Router, &homePage{cfg: sd.cfg, sessions: sd.sessions}, sd.llmsTxt,
			&claimPages{cfg: sd.cfg, deploys: sd.svc, kit: sd.kit, sessions: sd.sessions},
			&accountPages{cfg: sd.cfg, deploys: sd.svc, domains: sd.domainSvc, kit: sd.kit, sessions: sd.sessions})
		if err := se.Next(); err != nil {
			if ts != nil {
				ts.Close()
			}
			ln.Close()
			return err
		}
		if se.Server != nil {
			api.use(se.Server.Handler) // the mux, before the front door wraps it
			if se.Server.Handler != nil {
				// every listener serves this handler: the front door first
				se.Server.Handler = front.Wrap(se.Server.Handler)
			}
		}
		if se.Server == nil { // a test harness, not a real server
			return nil
		}
		sd.life.Start()
		if w := sd.cfg.Serve.Banner; w != nil {
			sd.printBanner(w)
		}
		if ts == nil {
			server.BindGracefulShutdown(sd.app, sd.cfg.Serve.ShutdownTimeout, se.Server)
			return nil
		}
		if err := ts.Start(se.Server); err != nil {
			ts.Close()
			return err
		}
		server.BindGracefulShutdown(sd.app, sd.cfg.Serve.ShutdownTimeout, se.Server, ts.HTTP)
		ts.BindCleanup(sd.app)
		return nil
	})
	return sd, nil
}

// MustRegister is Register that panics on error.
func MustRegister(app core.App, cfg *Config) {
	if err := Register(app, cfg); err != nil {
		panic(err)
	}
}

// init builds the services from the configuration, in dependency order,
// and only then stores them in sd. Every service is a local until the end,
// so the compiler refuses a service that is handed another before that one
// is built: a method value such as proxies.ClientIP is always taken from a
// finished value. (The site server was once handed sd.proxies.ClientIP
// before sd.proxies was set, and so counted every visitor behind a load
// balancer as the load balancer.) Settings parsed from flags come first, so
// a bad one fails before anything is opened.
func (sd *sitedrop) init() error {
	app, cfg := sd.app, sd.cfg
	cfg.withDefaults()

	proxies, err := server.ParseProxies(cfg.TrustedProxies)
	if err != nil {
		return err
	}
	publicIPs, err := parsePublicIPs(cfg.PublicIPs)
	if err != nil {
		return err
	}
	hosts := sites.NewHostSplit(cfg.Domain, cfg.SitesDomain)
	webHost, sitesDomain := hosts.Domains()

	blobs, s3, err := openStore(app, cfg)
	if err != nil {
		return err
	}
	reserved := cfg.ReservedSlugs
	if label := sites.WebHostLabel(cfg.Domain, cfg.SitesDomain); label != "" {
		// the web host lies under the sites domain: no site may take its name
		reserved = append(reserved[:len(reserved):len(reserved)], label)
	}
	svc := sites.NewService(app, blobs, sites.ServiceConfig{
		FreeSlots:     cfg.FreeSlots,
		KeepVersions:  cfg.KeepVersions,
		ProSlots:      cfg.ProSlots,
		ReservedSlugs: reserved,
		SubmitURL:     func(id string) string { return sd.cfg.links().Web() + "/submit/" + id },
	})
	serverOpts := serve.ServerOptions{
		ContentCacheBytes: cfg.ContentCache,
		ClientIP:          proxies.ClientIP, // analytics and the gate's attempt limits
		GateCookieTTL:     cfg.ProtectCookieTTL,
		SecureCookies:     cfg.siteOverTLS,
	}
	var stats *analytics.Aggregator
	if cfg.Analytics {
		stats = analytics.New()
		serverOpts.Recorder = stats
	}
	server := serve.NewServer(svc.LoadSite, blobs, serverOpts)

	sd.proxies = proxies
	sd.hosts = hosts
	sd.s3 = s3
	sd.svc = svc
	sd.analytics = stats
	sd.statsFlush = statsdb.NewFlusher(app, stats)
	sd.server = server
	sd.domainHosts = domains.NewTable(app)
	sd.domainSvc = domains.NewService(app, domains.Config{
		FreeLimit: cfg.DomainsFree,
		ProLimit:  cfg.DomainsPro,
		Rules:     domains.Rules{WebHost: webHost, SitesDomain: sitesDomain},
		PublicIPs: publicIPs,
		Resolvers: func() []string { return cfg.Serve.DNSResolvers }, // the serve flags come later
		SiteHost:  hosts.SiteHost,
	})
	sd.domainDesk = &domainDesk{svc: sd.domainSvc, actions: ratelimit.New(domainActionsPerMinute, time.Minute), cfg: cfg}
	sd.publisher = sd.newPublisher() // reads svc and s3 from sd, set above
	sd.gate = newDeployGate(cfg)
	sd.webhookSends = ratelimit.New(webhookSendsPerMinute, time.Minute)
	sd.uploads = ratelimit.New(int(uploadBytesFactor*cfg.MaxBody), time.Hour)
	sd.Guards = newBodyGuards(cfg)
	sd.sessions = newSessions(cfg)
	sd.kit = &pageKit{sessions: sd.sessions, guards: sd.Guards}
	sd.deliverer = forms.NewDeliverer(app, sd.cfg.webhookGuard())
	sd.notifyWake = make(chan struct{}, 1)
	return nil
}
