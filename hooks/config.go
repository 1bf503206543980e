// Package hooks binds sitedrop to a PocketBase app: every route, record
// hook and background job is registered here, and nowhere else.
//
//	app := pocketbase.New()
//	cfg := hooks.DefaultConfig()
//	hooks.MustRegister(app, &cfg)
//	app.Start()
package hooks

import (
	"time"

	"sitedrop/hooks/server"
	"sitedrop/sites"
	"sitedrop/sites/domains"
	"sitedrop/sites/intake"
	"sitedrop/sites/serve"
)

// Config holds sitedrop's settings. Fields are read when the app
// bootstraps, so command-line flags may fill them after Register.
type Config struct {
	// Domain is the web host: API, claim and sign-in pages, admin UI.
	// Default "localhost".
	Domain string
	// SitesDomain is where sites live: <slug>.<SitesDomain>. Default: Domain.
	SitesDomain string
	// PublicURL, when set, is the web URL that clients see (behind a
	// proxy); its scheme and port are also used for site URLs. Default:
	// derived from Domain and the listen address.
	PublicURL string
	// AnonTTL is how long an anonymous deployment lives. Default 24h.
	AnonTTL time.Duration
	// AnonDeploysOff refuses anonymous deploys (--anon-deploys=false).
	// Default false: anyone may deploy without an account.
	AnonDeploysOff bool
	// AnonHoldUntilClaimed keeps new anonymous sites unserved until an
	// account claims them (--anon-hold-until-claimed). Default false.
	AnonHoldUntilClaimed bool
	// MaxBody is the largest deploy request body in bytes. Default 50 MiB.
	MaxBody int64
	// MaxFiles is the most files one deployment may have. Default 20,000
	// (Cloudflare Pages' limit; issue 14 raised it from 1000).
	MaxFiles int
	// FreeSlots and ProSlots are the deployments each plan allows.
	// Defaults 5 and 50.
	FreeSlots int
	ProSlots  int
	// DomainsFree and DomainsPro are the custom domains each plan allows,
	// over all of an account's sites. Defaults 1 and 10.
	DomainsFree int
	DomainsPro  int
	// PublicIPs are the server's public addresses, the A/AAAA records an
	// apex custom domain needs (--public-ip). Default: the addresses the
	// site's own host resolves to.
	PublicIPs []string
	// ReservedSlugs are refused on top of the built-in list.
	ReservedSlugs []string
	// AnonDeploysPerHour limits anonymous POST /deploy per client IP.
	// Default 10; negative disables the limit.
	AnonDeploysPerHour int
	// DeploysPerMinute limits POST and PUT deploys per account. Default
	// 60; negative disables the limit.
	DeploysPerMinute int
	// ConcurrentDeploys is how many deploys are validated and stored at
	// once, their bodies read; more wait their turn (bodies are read
	// before, within DeployMemory). Default 4.
	ConcurrentDeploys int
	// DeployMemory bounds the memory that every deploy and blob upload
	// together hold: bodies as they arrive, unpacked and loaded files.
	// Past it a request waits briefly, then is answered 503. Default
	// 512 MiB, and never less than intake.DeployMemoryFactor x MaxBody,
	// what one deploy of the largest size may hold.
	DeployMemory int64
	// AnonStoragePerIP bounds the bytes of files that anonymous deploys
	// from one client IP (an IPv6 /64) store in an AnonTTL window.
	// Default 100 MiB.
	AnonStoragePerIP int64
	// Signup lets a first sign-in by e-mail code create an account.
	// Default true (set with --signup=false to close it).
	Signup bool
	// TrustedProxies are the addresses or CIDR ranges of reverse proxies
	// whose X-Forwarded-For is believed for the client IP. Default none:
	// the client IP is the connection's address.
	TrustedProxies []string
	// WebhooksAllowPrivate lets webhooks target loopback, private and
	// other reserved addresses (refused by default: SSRF). Default false.
	WebhooksAllowPrivate bool
	// BlobDir holds site content. Default: <data dir>/site_blobs.
	BlobDir string
	// Store is where site content lives: "file" (default: BlobDir) or
	// s3://bucket/prefix?endpoint=URL&region=REGION (see
	// s3store.Location); with S3 the live manifests are published there
	// too, for replicas (see sites/publish).
	Store string
	// ReplicaRetention is how long blobs stay in an S3 store after a
	// publish stopped naming them (a new version, a deleted site), for
	// replicas that have not seen the change yet. Default 15 minutes
	// (publish.DefaultRetention).
	ReplicaRetention time.Duration
	// GCGrace is how old an unreferenced blob must be before the
	// collector removes it. Default 1 minute.
	GCGrace time.Duration
	// KeepVersions is how many versions of each deployment are kept for
	// rollback, the live one included. Default 10.
	KeepVersions int
	// ContentCache bounds the memory holding site files (up to 1 MiB
	// each) for serving. Default 64 MiB.
	ContentCache int64
	// ProtectCookieTTL is how long a visitor who passed a protected
	// site's gate stays in. Default 7 days.
	ProtectCookieTTL time.Duration
	// Analytics counts the sites' visits (page views, visitors, top
	// pages, referrer hosts, 404s, bytes; no cookies, no IPs kept; see
	// sites/analytics). Default true.
	Analytics bool
	// AnalyticsShip is how often a replica ships its counts to the
	// primary through the store (no flag: tests shorten it). Default
	// ship.DefaultInterval, a minute.
	AnalyticsShip time.Duration

	// Serve holds the settings of the serve command: listen addresses,
	// certificates and shutdown.
	Serve server.Config

	// listenPort is the port the server listens on, learned at serve
	// time; site and web URLs carry it when they are derived.
	listenPort string
	// listenHost is the host of the listen address, normalised ("" for
	// all interfaces); a request naming it is one for the web host.
	listenHost string
	// listenScheme is "https" when the server listens with TLS.
	listenScheme string
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{
		Domain:             "localhost",
		AnonTTL:            24 * time.Hour,
		MaxBody:            50 << 20,
		MaxFiles:           20000,
		FreeSlots:          sites.DefaultFreeSlots,
		ProSlots:           sites.DefaultProSlots,
		DomainsFree:        domains.DefaultFreeLimit,
		DomainsPro:         domains.DefaultProLimit,
		AnonDeploysPerHour: 10,
		DeploysPerMinute:   60,
		ConcurrentDeploys:  4,
		DeployMemory:       512 << 20,
		AnonStoragePerIP:   100 << 20,
		Signup:             true,
		GCGrace:            time.Minute,
		ContentCache:       serve.DefaultContentCacheBytes,
		ProtectCookieTTL:   serve.DefaultGateCookieTTL,
		KeepVersions:       sites.DefaultKeepVersions,
		Analytics:          true,
		Serve:              server.DefaultConfig(),
	}
}

// withDefaults fills zero fields with their defaults (the limits of
// anonymous deploys and deploys per minute are negative when off: only
// zero is filled there).
func (c *Config) withDefaults() {
	d := DefaultConfig()
	if c.Domain == "" {
		c.Domain = d.Domain
	}
	if c.SitesDomain == "" {
		c.SitesDomain = c.Domain
	}
	if c.AnonDeploysPerHour == 0 {
		c.AnonDeploysPerHour = d.AnonDeploysPerHour
	}
	if c.DeploysPerMinute == 0 {
		c.DeploysPerMinute = d.DeploysPerMinute
	}
	orDefault(&c.AnonTTL, d.AnonTTL)
	orDefault(&c.MaxBody, d.MaxBody)
	orDefault(&c.MaxFiles, d.MaxFiles)
	orDefault(&c.FreeSlots, d.FreeSlots)
	orDefault(&c.ProSlots, d.ProSlots)
	orDefault(&c.DomainsFree, d.DomainsFree)
	orDefault(&c.DomainsPro, d.DomainsPro)
	orDefault(&c.ConcurrentDeploys, d.ConcurrentDeploys)
	orDefault(&c.DeployMemory, d.DeployMemory)
	// one deploy of the largest size must fit, or it would get 503 forever
	c.DeployMemory = max(c.DeployMemory, intake.DeployMemoryFactor*c.MaxBody)
	orDefault(&c.AnonStoragePerIP, d.AnonStoragePerIP)
	orDefault(&c.GCGrace, d.GCGrace)
	orDefault(&c.KeepVersions, d.KeepVersions)
	orDefault(&c.ContentCache, d.ContentCache)
	orDefault(&c.ProtectCookieTTL, d.ProtectCookieTTL)
	if c.Serve.ACMECA == "" {
		c.Serve.ACMECA = d.Serve.ACMECA
	}
	// Serve's zero values are meaningful (0 new certificates, no drain):
	// its defaults come from DefaultConfig, through the serve flags.
}

// anonPolicy is the anonymous deploys' policy of the flags, which the
// sitedrop settings record overrides at run time (sites.InstanceSettings).
func (c *Config) anonPolicy() sites.AnonPolicy {
	return sites.AnonPolicy{
		Enabled:          !c.AnonDeploysOff,
		TTL:              c.AnonTTL,
		DeploysPerHour:   c.AnonDeploysPerHour,
		StoragePerIP:     c.AnonStoragePerIP,
		HoldUntilClaimed: c.AnonHoldUntilClaimed,
	}
}

// orDefault sets *v to d when it is not positive.
func orDefault[T int | int64 | time.Duration](v *T, d T) {
	if *v <= 0 {
		*v = d
	}
}
