package hooks

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"sitedrop/hooks/server"
	"sitedrop/sites"
	"sitedrop/sites/domains"
)

// ServeSettings is what the serve command (server.NewServeCommand) reads
// of cfg when it runs, after the flags have filled it:
//
//	server.NewServeCommand(app, &cfg.Serve, hooks.ServeSettings(&cfg))
func ServeSettings(cfg *Config) server.Settings {
	return server.Settings{
		Check: func() error {
			_, err := domains.ParsePublicIPs(cfg.PublicIPs)
			return err
		},
		Domains: func() (string, string) { return cfg.Domain, cfg.SitesDomain },
		Replica: func() server.ReplicaConfig {
			cfg.withDefaults() // a replica's app does not bootstrap
			return server.ReplicaConfig{
				Store:          cfg.Store,
				OpenStore:      server.OpenS3Store,
				TrustedProxies: cfg.TrustedProxies,
				ContentCache:   cfg.ContentCache,
				SecureCookies:  cfg.siteOverTLS,
				Analytics:      cfg.Analytics,
				AnalyticsShip:  cfg.AnalyticsShip,
				Hosts:          sites.NewHostSplit(cfg.Domain, cfg.SitesDomain),
			}
		},
	}
}

// ReplicaRequested reports whether args (the command line after the
// program name) run `serve --replica` (see server.ReplicaRequested), the
// server's flags (BindFlags) known.
func ReplicaRequested(c *cobra.Command, args []string) bool {
	return server.ReplicaRequested(c, args, func(fs *pflag.FlagSet) {
		cfg := DefaultConfig()
		BindFlags(fs, &cfg)
	})
}

// printBanner tells where the started server answers.
func printBanner(w io.Writer, cfg *Config, links sites.Links) {
	web := links.Web()
	fmt.Fprintf(w, "sitedrop serving at %s\n", web)
	fmt.Fprintf(w, "├─ sites:     %s\n", links.Site("<slug>"))
	fmt.Fprintf(w, "├─ deploy:    %s/deploy\n", web)
	if s := cfg.Serve; s.HTTPSAddr != "" && s.HTTPAddr != "" {
		fmt.Fprintf(w, "├─ plain HTTP on %s: ACME challenges, redirects to https\n", s.HTTPAddr)
	}
	fmt.Fprintf(w, "└─ dashboard: %s/_/\n", web)
}
