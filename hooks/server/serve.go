package server

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pocketbase/pocketbase/apis"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/hook"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"sitedrop/hooks/server/certs"
)

// DefaultHTTPAddr is where sitedrop listens without --https.
const DefaultHTTPAddr = "127.0.0.1:8090"

// Settings is what the serve command reads of sitedrop's other settings
// (hooks.Config) when it runs: flags fill them after the command is
// built, so each is a function called then.
type Settings struct {
	// Check refuses the other settings that cannot work, before anything
	// listens; nil: none.
	Check func() error
	// Domains returns the web host (--domain) and the sites domain
	// (--sites-domain): under --https, certificates are obtained for
	// them.
	Domains func() (web, sites string)
	// Replica returns what `serve --replica` needs. A replica's app never
	// bootstraps, so Replica applies the settings' defaults itself.
	Replica func() ReplicaConfig
}

// NewServeCommand returns `sitedrop serve`, which replaces PocketBase's
// serve command; its flags fill cfg. Without --https it serves plain HTTP
// on --http. With --https it serves TLS with certificates from an ACME CA
// (certmagic, not PocketBase's autocert, which cannot issue for sites),
// and --http (":80" unless set) answers ACME challenges and redirects to
// https. With --replica it serves the sites published to an S3 store,
// without app (see RunReplica).
func NewServeCommand(app core.App, cfg *Config, settings Settings) *cobra.Command {
	c := &cobra.Command{
		Use:   "serve",
		Args:  cobra.NoArgs,
		Short: "Starts the web server (default " + DefaultHTTPAddr + "; --https for TLS with automatic certificates)",
		Long: `Starts the web server.

Without --https, everything is served over plain HTTP on --http
(default ` + DefaultHTTPAddr + `).

With --https ADDR, certificates are obtained and renewed through ACME
(Let's Encrypt unless --acme-ca says otherwise): one for the web host
(--domain), and one per live site when a browser first asks for it, or a
single wildcard certificate for the sites domain with --dns-provider.
With --tls-cert FILE --tls-key FILE, a certificate you bring (e.g. a
wildcard *.<sites-domain> plus the domain, from your own DNS-01 tooling)
is served for the names it covers, which then never reach ACME; a
renewed pair written over the files is served within a minute or two.
--http (default: port 80 of the --https host) then answers ACME HTTP-01
challenges and /api/health, and redirects everything else to https.

With --replica --store s3://..., it serves only the sites the primary
publishes to that store, on --http, with no database, API or dashboard
(see the README's "Scale out"). It polls the store every 2 s; with
--primary URL it learns of changes from the primary at once instead, and
polls the store every 15 s only while the primary answers.`,
		SilenceUsage: true,
		RunE: func(c *cobra.Command, _ []string) error {
			s := cfg
			if s.Replica {
				if s.HTTPAddr == "" {
					s.HTTPAddr = DefaultHTTPAddr
				}
				rc := settings.Replica()
				return RunReplica(c.Context(), *s, rc, c.OutOrStdout(), c.ErrOrStderr())
			}
			if s.HTTPSAddr == "" {
				if s.HTTPAddr == "" {
					s.HTTPAddr = DefaultHTTPAddr
				}
			} else if !c.Flags().Changed("http") {
				s.HTTPAddr = redirectAddrFor(s.HTTPSAddr)
			}
			if err := s.Check(settings); err != nil {
				return err
			}
			s.Banner = c.OutOrStdout() // sitedrop's own banner (PocketBase's omits ports)
			s.Logs = c.ErrOrStderr()
			sc := apis.ServeConfig{AllowedOrigins: s.Origins}
			if s.HTTPSAddr == "" {
				sc.HttpAddr = s.HTTPAddr
			} else {
				// TLS is terminated in sitedrop's own main listener (see
				// serve.ListenFront), which PocketBase then serves as a
				// plain one; the plain HTTP listener is sitedrop's own
				// too (see TLS.Prepare): PocketBase's would serve
				// autocert. The web host still gets PocketBase's www
				// redirect.
				sc.HttpAddr = s.HTTPSAddr
				web, _ := settings.Domains()
				sc.CertificateDomains = []string{web}
			}
			terminated := awaitTermination(app)
			err := apis.Serve(app, sc)
			terminated()
			if errors.Is(err, http.ErrServerClosed) {
				return nil
			}
			return err
		},
	}
	BindServeFlags(c.Flags(), cfg)
	return c
}

// BindServeFlags adds the serve command's flags to fs, filling s.
func BindServeFlags(fs *pflag.FlagSet, s *Config) {
	fs.StringVar(&s.HTTPAddr, "http", s.HTTPAddr, "plain HTTP listen address (default "+DefaultHTTPAddr+"; with --https: port 80, for ACME challenges and redirects; \"\" for none)")
	fs.StringVar(&s.HTTPSAddr, "https", s.HTTPSAddr, "TLS listen address, e.g. :443; certificates are obtained automatically through ACME")
	fs.StringSliceVar(&s.Origins, "origins", s.Origins, "CORS allowed origins of PocketBase's own API (/api/collections...)")
	fs.StringVar(&s.TLSCert, "tls-cert", s.TLSCert, "with --https: PEM file of a certificate you bring (leaf then chain), e.g. a wildcard *.<sites-domain> from your own DNS-01 tooling; served for the names it covers, the others still get certificates through ACME")
	fs.StringVar(&s.TLSKey, "tls-key", s.TLSKey, "with --tls-cert: PEM file of its private key")
	fs.StringVar(&s.ACMECA, "acme-ca", s.ACMECA, "ACME directory URL of the certificate authority")
	fs.StringVar(&s.ACMECARoot, "acme-ca-root", s.ACMECARoot, "PEM file of root certificates to trust for the ACME server (a private CA)")
	fs.StringVar(&s.ACMEEmail, "acme-email", s.ACMEEmail, "contact address of the ACME account (certificate problems are mailed there)")
	fs.StringVar(&s.DNSProvider, "dns-provider", s.DNSProvider, "obtain one wildcard certificate for the sites domain through this DNS provider (DNS-01), e.g. cloudflare; credentials from the environment")
	fs.StringSliceVar(&s.DNSResolvers, "dns-resolvers", s.DNSResolvers, "DNS servers (host:port) for DNS-01 zone lookups and propagation checks (default: the system's and the zone's own)")
	fs.IntVar(&s.NewCertsPerHour, "new-certs-per-hour", s.NewCertsPerHour, "new certificates obtained on demand per hour, to spare the CA's rate limits; anonymous sites may take at most half (-1: no limit; not used with --dns-provider)")
	fs.IntVar(&s.MaxConnsPerIP, "max-conns-per-ip", s.MaxConnsPerIP, "open connections allowed per client IP (IPv6: per /64); more are closed at once (0: no limit; --trusted-proxies are not counted)")
	fs.BoolVar(&s.Replica, "replica", s.Replica, "serve only the sites published to --store s3://... (no database, API or dashboard), behind a load balancer or CDN")
	fs.StringVar(&s.Primary, "primary", s.Primary, "with --replica: the primary's URL, e.g. http://10.0.0.2:8090; the replica learns of changes from it at once and polls the store every 15 s only (default: poll the store every 2 s)")
	fs.StringVar(&s.MetricsAddr, "metrics", s.MetricsAddr, "serve Prometheus metrics at /metrics on this address, e.g. 127.0.0.1:9180, a listener of their own (default: off)")
	fs.DurationVar(&s.ShutdownTimeout, "shutdown-timeout", s.ShutdownTimeout, "how long SIGTERM waits for in-flight requests and uploads (0: no wait)")
}

// redirectAddrFor is the default plain HTTP address beside an HTTPS
// address: the same host, port 80.
func redirectAddrFor(httpsAddr string) string {
	host, _, err := net.SplitHostPort(httpsAddr)
	if err != nil {
		return ":80"
	}
	return net.JoinHostPort(host, "80")
}

// Check refuses settings that cannot work, before anything listens: the
// other settings' (settings.Check) first, then c's.
func (c Config) Check(settings Settings) error {
	if settings.Check != nil {
		if err := settings.Check(); err != nil {
			return err
		}
	}
	if c.ShutdownTimeout < 0 {
		return errors.New("--shutdown-timeout must not be negative")
	}
	if c.Primary != "" {
		return errors.New("--primary is a replica's setting: give it with --replica")
	}
	if err := c.checkMetrics(); err != nil {
		return err
	}
	if c.HTTPSAddr == "" {
		if c.DNSProvider != "" || c.ACMECARoot != "" || c.ACMEEmail != "" || c.TLSCert != "" || c.TLSKey != "" {
			return errors.New("--dns-provider, --acme-ca-root, --acme-email, --tls-cert and --tls-key need --https")
		}
		return nil
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return errors.New("--tls-cert and --tls-key go together: the certificate and its private key")
	}
	if c.TLSCert != "" {
		if _, err := certs.LoadKeyPair(c.TLSCert, c.TLSKey, time.Now()); err != nil {
			return err
		}
	}
	if _, _, err := SplitListenAddr(c.HTTPSAddr); err != nil {
		return fmt.Errorf("--https %q: %w", c.HTTPSAddr, err)
	}
	if c.HTTPAddr != "" {
		if _, _, err := SplitListenAddr(c.HTTPAddr); err != nil {
			return fmt.Errorf("--http %q: %w", c.HTTPAddr, err)
		}
	}
	web, sitesDomain := settings.Domains()
	for _, f := range []struct{ flag, name string }{{"--domain", web}, {"--sites-domain", sitesDomain}} {
		if err := checkCertName(f.name); err != nil {
			return fmt.Errorf("--https needs %s to be a DNS name that resolves to this machine: %w", f.flag, err)
		}
	}
	if c.DNSProvider != "" {
		if _, err := certs.NewDNSProvider(c.DNSProvider); err != nil {
			return err
		}
	}
	return nil
}

// checkMetrics refuses a --metrics address that cannot be listened on
// beside the others: malformed, or one of theirs.
func (c Config) checkMetrics() error {
	if c.MetricsAddr == "" {
		return nil
	}
	if _, _, err := SplitListenAddr(c.MetricsAddr); err != nil {
		return fmt.Errorf("--metrics %q: %w", c.MetricsAddr, err)
	}
	if c.MetricsAddr == c.HTTPAddr || c.MetricsAddr == c.HTTPSAddr {
		return fmt.Errorf("--metrics %q: the metrics need a listener of their own, not --http's or --https'", c.MetricsAddr)
	}
	return nil
}

// checkCertName refuses names no public or private ACME CA issues for.
func checkCertName(name string) error {
	h := strings.ToLower(strings.TrimSuffix(strings.TrimSpace(name), "."))
	switch {
	case h == "":
		return errors.New("it is empty")
	case net.ParseIP(strings.Trim(h, "[]")) != nil:
		return fmt.Errorf("%q is an IP address", name)
	case h == "localhost" || strings.HasSuffix(h, ".localhost"):
		return fmt.Errorf("%q is a local name", name)
	case !strings.Contains(h, "."):
		return fmt.Errorf("%q has no dot", name)
	}
	return nil
}

// awaitTermination returns a function that, once the app has begun to
// terminate, waits until termination is complete. The drain makes
// apis.Serve return as soon as the listeners close; without this wait the
// serve command would return in the middle of a restart (a backup
// restore), and PocketBase would then exit instead of re-executing.
func awaitTermination(app core.App) (wait func()) {
	var started atomic.Bool
	var once sync.Once
	done := make(chan struct{})
	app.OnTerminate().Bind(&hook.Handler[*core.TerminateEvent]{
		Id:       "sitedropAwaitTermination",
		Priority: GracefulShutdownPriority - 1, // first, so it sees the whole chain
		Func: func(e *core.TerminateEvent) error {
			started.Store(true)
			// a failed restart's execve is followed by a second terminate
			defer once.Do(func() { close(done) })
			return e.Next()
		},
	})
	return func() {
		if started.Load() {
			<-done
		}
	}
}
