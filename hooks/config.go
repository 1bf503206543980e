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
	// MaxBody is the largest deploy request body in bytes. Default 50 MiB.
	MaxBody int64
	// MaxFiles is the most files one deployment may have. Default 1000.
	MaxFiles int
	// FreeSlots and ProSlots are the deployments each plan allows.
	// Defaults 5 and 50.
	FreeSlots int
	ProSlots  int
	// ReservedSlugs are refused on top of the built-in list.
	ReservedSlugs []string
	// AnonDeploysPerHour limits anonymous POST /deploy per client IP.
	// Default 10; negative disables the limit.
	AnonDeploysPerHour int
	// DeploysPerMinute limits POST and PUT deploys per account. Default
	// 60; negative disables the limit.
	DeploysPerMinute int
	// ConcurrentDeploys is how many deploy bodies are decoded and stored
	// at once; more wait their turn. It bounds the memory that large
	// uploads take. Default 4.
	ConcurrentDeploys int
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
	// GCGrace is how old an unreferenced blob must be before the
	// collector removes it. Default 1 minute.
	GCGrace time.Duration

	// listenPort is the port the server listens on, learned at serve
	// time; site and web URLs carry it when they are derived.
	listenPort string
	// listenScheme is "https" when the server listens with TLS on 443.
	listenScheme string
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{
		Domain:             "localhost",
		AnonTTL:            24 * time.Hour,
		MaxBody:            50 << 20,
		MaxFiles:           1000,
		FreeSlots:          5,
		ProSlots:           50,
		AnonDeploysPerHour: 10,
		DeploysPerMinute:   60,
		ConcurrentDeploys:  4,
		Signup:             true,
		GCGrace:            time.Minute,
	}
}

// withDefaults fills zero fields with their defaults.
func (c *Config) withDefaults() {
	d := DefaultConfig()
	if c.Domain == "" {
		c.Domain = d.Domain
	}
	if c.SitesDomain == "" {
		c.SitesDomain = c.Domain
	}
	if c.AnonTTL <= 0 {
		c.AnonTTL = d.AnonTTL
	}
	if c.MaxBody <= 0 {
		c.MaxBody = d.MaxBody
	}
	if c.MaxFiles <= 0 {
		c.MaxFiles = d.MaxFiles
	}
	if c.FreeSlots <= 0 {
		c.FreeSlots = d.FreeSlots
	}
	if c.ProSlots <= 0 {
		c.ProSlots = d.ProSlots
	}
	if c.AnonDeploysPerHour == 0 {
		c.AnonDeploysPerHour = d.AnonDeploysPerHour
	}
	if c.DeploysPerMinute == 0 {
		c.DeploysPerMinute = d.DeploysPerMinute
	}
	if c.ConcurrentDeploys <= 0 {
		c.ConcurrentDeploys = d.ConcurrentDeploys
	}
	if c.GCGrace <= 0 {
		c.GCGrace = d.GCGrace
	}
}
