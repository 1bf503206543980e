package hooks

import (
	"strconv"

	"github.com/spf13/pflag"

	"sitedrop/sites"
)

// BindFlags adds the server's flags to fs, filling cfg when fs is parsed.
// cfg should start from DefaultConfig so the help shows the defaults.
// main gives them to the commands that bootstrap the app (serve, user,
// key, superuser, migrate), never to the client commands.
func BindFlags(fs *pflag.FlagSet, cfg *Config) {
	fs.StringVar(&cfg.Domain, "domain", cfg.Domain, "the web host: API, claim and sign-in pages, admin UI")
	fs.StringVar(&cfg.SitesDomain, "sites-domain", cfg.SitesDomain, "sites are served at <slug>.<sites-domain> (default: --domain)")
	fs.StringVar(&cfg.Store, "store", cfg.Store, "where site content lives: file (under the data dir) or s3://bucket/prefix?endpoint=URL&region=REGION (credentials from the environment)")
	fs.StringVar(&cfg.PublicURL, "public-url", cfg.PublicURL, "the web URL clients see, e.g. https://deploy.example.com behind a proxy (default: derived)")
	fs.DurationVar(&cfg.AnonTTL, "anon-ttl", cfg.AnonTTL, "how long anonymous deployments live unless claimed")
	fs.Var((*enabledFlag)(&cfg.AnonDeploysOff), "anon-deploys", "let anyone deploy without an account; --anon-deploys=false turns anonymous deploys off (the sitedrop settings record in /_/ overrides this and the other --anon-* flags at run time)")
	fs.Lookup("anon-deploys").NoOptDefVal = "true"
	fs.BoolVar(&cfg.AnonHoldUntilClaimed, "anon-hold-until-claimed", cfg.AnonHoldUntilClaimed, "keep new anonymous sites unserved (an \"awaiting claim\" page) until an account claims them")
	fs.Var((*sites.ByteSize)(&cfg.MaxBody), "max-body", "largest deploy request body, e.g. 50MiB")
	fs.IntVar(&cfg.KeepVersions, "keep-versions", cfg.KeepVersions, "versions of each deployment kept for rollback, the live one included")
	fs.Var((*sites.ByteSize)(&cfg.ContentCache), "content-cache", "memory for site files served from RAM (files up to 1 MiB), e.g. 64MiB")
	fs.DurationVar(&cfg.ProtectCookieTTL, "protect-cookie-ttl", cfg.ProtectCookieTTL, "how long a visitor who passed a protected site's gate (password or share link) stays in")
	fs.BoolVar(&cfg.Analytics, "analytics", cfg.Analytics, "count the sites' visits (no cookies, no IPs kept); --analytics=false turns counting off")
	fs.IntVar(&cfg.MaxFiles, "max-files", cfg.MaxFiles, "most files in one deployment")
	fs.IntVar(&cfg.FreeSlots, "free-slots", cfg.FreeSlots, "deployments a free account may have")
	fs.IntVar(&cfg.ProSlots, "pro-slots", cfg.ProSlots, "deployments a pro account may have")
	fs.IntVar(&cfg.DomainsFree, "domains-free", cfg.DomainsFree, "custom domains a free account may have")
	fs.IntVar(&cfg.DomainsPro, "domains-pro", cfg.DomainsPro, "custom domains a pro account may have")
	fs.StringSliceVar(&cfg.PublicIPs, "public-ip", cfg.PublicIPs, "the server's public address for apex custom domains' A/AAAA records (repeatable; default: what the site's host resolves to)")
	fs.StringSliceVar(&cfg.ReservedSlugs, "reserved-slugs", cfg.ReservedSlugs, "slugs to refuse on top of the built-in list (comma-separated)")
	fs.IntVar(&cfg.DeploysPerMinute, "deploys-per-minute", cfg.DeploysPerMinute, "deploys (POST and PUT) allowed per account and minute (-1: no limit)")
	fs.IntVar(&cfg.ConcurrentDeploys, "concurrent-deploys", cfg.ConcurrentDeploys, "deploys validated and stored at once, their bodies read; more wait")
	fs.Var((*sites.ByteSize)(&cfg.DeployMemory), "deploy-memory", "memory all deploys and blob uploads may hold together; past it they wait briefly, then get 503, e.g. 512MiB")
	fs.Var((*sites.ByteSize)(&cfg.AnonStoragePerIP), "anon-storage-per-ip", "bytes anonymous deploys from one client IP may store per --anon-ttl, e.g. 100MiB")
	fs.BoolVar(&cfg.Signup, "signup", cfg.Signup, "let a first sign-in by e-mail code create an account")
	fs.StringSliceVar(&cfg.TrustedProxies, "trusted-proxies", cfg.TrustedProxies, "reverse proxies (IPs or CIDRs, comma-separated) whose X-Forwarded-For gives the client IP")
	fs.BoolVar(&cfg.WebhooksAllowPrivate, "webhooks-allow-private", cfg.WebhooksAllowPrivate, "let webhooks target loopback, private and reserved addresses (for self-hosted receivers)")
	fs.IntVar(&cfg.AnonDeploysPerHour, "anon-deploys-per-hour", cfg.AnonDeploysPerHour, "anonymous deploys allowed per client IP and hour (-1: no limit)")
}

// enabledFlag is a boolean flag that turns on what its Config field, set
// when something is off, turns off: --anon-deploys (true) is
// AnonDeploysOff false, so that a Config's zero value allows them.
type enabledFlag bool

// String is the flag's value, "true" when enabled.
func (f *enabledFlag) String() string { return strconv.FormatBool(!bool(*f)) }

// Type names the flag's kind in the help.
func (f *enabledFlag) Type() string { return "bool" }

// Set parses a boolean: true enables.
func (f *enabledFlag) Set(s string) error {
	on, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	*f = enabledFlag(!on)
	return nil
}
