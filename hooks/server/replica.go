package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"sitedrop/hooks/server/metrics"
	"sitedrop/sites"
	"sitedrop/sites/analytics"
	"sitedrop/sites/analytics/ship"
	"sitedrop/sites/replica"
	"sitedrop/sites/serve"
	"sitedrop/sites/store/s3store"
)

// ReplicaConfig is what `serve --replica` needs beyond the serve
// settings: the primary's store and the site server's options.
type ReplicaConfig struct {
	// Store is --store: an S3 URL, the primary's.
	Store string
	// OpenStore opens Store.
	OpenStore func(url string) (*s3store.Store, error)
	// TrustedProxies are --trusted-proxies (see ParseProxies).
	TrustedProxies []string
	// ContentCache bounds the memory holding site files (--content-cache).
	ContentCache int64
	// SecureCookies reports whether a site request came over TLS, its
	// own or a load balancer's (an https --public-url): the gate's cookie
	// is Secure and __Host- then.
	SecureCookies func(*http.Request) bool
	// Analytics counts the visits (--analytics), as the primary does, and
	// ships the counts to it through the store every AnalyticsShip
	// (default ship.DefaultInterval; see sites/analytics/ship).
	Analytics     bool
	AnalyticsShip time.Duration
	// Hosts tells site hosts (--sites-domain) from custom domains, for
	// the metrics' host classes.
	Hosts sites.HostSplit
}

// ShipAtShutdown bounds a replica's last ship of its counts at SIGTERM,
// after its requests have drained.
const ShipAtShutdown = 10 * time.Second

// ReplicaRequested reports whether args (the command line after the
// program name) run `serve --replica`: main then runs it without
// bootstrapping PocketBase, so a replica opens no database and needs no
// data dir. bindOther binds the command line's other flags (nil: none),
// so that a value of one is not taken for a flag.
func ReplicaRequested(c *cobra.Command, args []string, bindOther func(*pflag.FlagSet)) bool {
	if c.Name() != "serve" || c.Parent() == nil || c.Parent().Parent() != nil {
		return false
	}
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	fs.ParseErrorsAllowlist.UnknownFlags = true
	fs.SetOutput(io.Discard)
	var s Config
	BindServeFlags(fs, &s)
	if bindOther != nil {
		bindOther(fs)
	}
	if err := fs.Parse(args); err != nil {
		return false
	}
	return s.Replica
}

// checkReplicaConfig refuses replica settings that cannot work.
func checkReplicaConfig(c Config, rc ReplicaConfig) error {
	if !strings.HasPrefix(rc.Store, "s3://") {
		return errors.New("--replica serves from an S3 store: give --store s3://bucket/prefix?endpoint=...&region=... (the primary's)")
	}
	if c.HTTPSAddr != "" {
		return errors.New("--replica serves plain HTTP (--http): put replicas behind a load balancer or CDN that terminates TLS")
	}
	if err := checkPrimary(c.Primary); err != nil {
		return err
	}
	return c.checkMetrics()
}

// checkPrimary refuses a --primary that is not an http(s) URL of a host
// ("" is none).
func checkPrimary(primary string) error {
	if primary == "" {
		return nil
	}
	u, err := url.Parse(primary)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return fmt.Errorf("--primary %q: want the primary's URL, http(s)://host[:port], e.g. http://10.0.0.2:8090", primary)
	}
	return nil
}

// RunReplica is `sitedrop serve --replica`: it serves the sites the
// primary publishes to rc.Store, on c.HTTPAddr, until SIGINT, SIGTERM or
// the end of ctx.
func RunReplica(ctx context.Context, c Config, rc ReplicaConfig, out, logs io.Writer) error {
	if err := checkReplicaConfig(c, rc); err != nil {
		return err
	}
	s3, err := rc.OpenStore(rc.Store)
	if err != nil {
		return err
	}
	proxies, err := ParseProxies(rc.TrustedProxies)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	opts := replicaServerOptions(rc, proxies)
	var shipper *ship.Shipper
	if rc.Analytics {
		opts.Recorder, shipper = startCounting(ctx, rc, s3, logger)
	}
	var m *metrics.Metrics
	if c.MetricsAddr != "" {
		m = metrics.New()
		opts.CacheCounter = m
		s3.CountErrors(m)
	}
	rep := replica.New(replica.Config{Objects: s3, Blobs: s3, Logger: logger, Server: opts, Primary: c.Primary})
	var handler http.Handler = rep
	if m != nil {
		// the metrics listen first, so they see every answer
		m.Replica(rep.LastSync)
		if c.Primary != "" {
			m.ReplicaPush(rep.Following)
		}
		ms, err := metrics.Listen(c.MetricsAddr, m)
		if err != nil {
			return err
		}
		defer ms.Close()
		fmt.Fprintf(out, "sitedrop replica metrics at http://%s%s\n", ms.Addr(), metrics.Path)
		handler = measureReplica(m, rc.Hosts, rep)
	}
	ln, err := net.Listen("tcp", c.HTTPAddr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: handler, ConnContext: serve.ConnContext}
	c.SetTimeouts(srv)
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	go rep.Run(ctx)
	if shipper != nil {
		go shipper.Run(ctx)
		defer shipLast(shipper, logger)
	}
	fmt.Fprintf(out, "sitedrop replica serving the sites of %s at http://%s\n", s3.Location().Bucket, ln.Addr())
	errc := make(chan error, 1)
	go func() {
		errc <- srv.Serve(serve.NewListener(ln, serve.NewConnLimit(c.MaxConnsPerIP, proxies), nil))
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), c.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// startCounting returns the aggregator that counts a replica's answers
// and the shipper of its counts, the day's salt read first (within
// ShipAtShutdown) so that the first visitors hash as on the primary.
func startCounting(ctx context.Context, rc ReplicaConfig, s3 *s3store.Store, logger *slog.Logger) (*analytics.Aggregator, *ship.Shipper) {
	salts := ship.NewSalts(s3)
	agg := analytics.NewWithOptions(analytics.Options{Salts: salts, Ship: true})
	sctx, cancel := context.WithTimeout(ctx, ShipAtShutdown)
	defer cancel()
	if err := salts.Refresh(sctx); err != nil {
		logger.Error("replica: read the analytics salts; visitors hashed locally until they are", "error", err)
	}
	return agg, ship.NewShipper(ship.ShipperConfig{
		Objects: s3, Aggregator: agg, Salts: salts, Interval: rc.AnalyticsShip, Logger: logger,
	})
}

// shipLast ships what the replica counted since its last ship, within
// ShipAtShutdown: run once its server has drained.
func shipLast(s *ship.Shipper, logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), ShipAtShutdown)
	defer cancel()
	if err := s.Ship(ctx); err != nil {
		logger.Error("replica: analytics not shipped at shutdown", "error", err)
	}
}

// measureReplica counts every answer of rep (see metrics.Measure), by
// the class of its host: a site host (rc.Hosts), a published custom
// domain, the health check on any other host (web), or a host the
// replica does not serve (unknown).
func measureReplica(m *metrics.Metrics, hosts sites.HostSplit, rep *replica.Replica) http.Handler {
	route := func(w http.ResponseWriter, r *http.Request) metrics.HostClass {
		rep.ServeHTTP(w, r)
		switch {
		case !sites.ValidHost(r.Host):
			return metrics.Unknown
		case isSiteHost(hosts, r.Host):
			return metrics.Site
		case rep.Publishes(r.Host):
			return metrics.CustomDomain
		case r.URL.Path == replica.HealthPath:
			return metrics.Web
		}
		return metrics.Unknown
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.Measure(w, r, route)
	})
}

// isSiteHost reports whether host is <slug>.<sites-domain>.
func isSiteHost(hosts sites.HostSplit, host string) bool {
	_, ok := hosts.Site(host)
	return ok
}

// replicaServerOptions are a replica's site server options: as on the
// primary, the gate's password attempts count the client behind
// --trusted-proxies (X-Forwarded-For), not the load balancer every
// request comes from; and behind a load balancer that terminates TLS
// (an https --public-url) the gate's cookie is Secure and __Host-.
func replicaServerOptions(rc ReplicaConfig, proxies TrustedProxies) serve.ServerOptions {
	return serve.ServerOptions{
		ContentCacheBytes: rc.ContentCache,
		ClientIP:          proxies.ClientIP,
		SecureCookies:     rc.SecureCookies,
	}
}
