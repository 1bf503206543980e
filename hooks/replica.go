package hooks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"sitedrop/hooks/server"
	"sitedrop/sites/replica"
	"sitedrop/sites/serve"
)

// ReplicaRequested reports whether args (the command line after the
// program name) run `serve --replica`: main then runs it without
// bootstrapping PocketBase, so a replica opens no database and needs no
// data dir.
func ReplicaRequested(c *cobra.Command, args []string) bool {
	if c.Name() != "serve" || c.Parent() == nil || c.Parent().Parent() != nil {
		return false
	}
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	fs.ParseErrorsAllowlist.UnknownFlags = true
	fs.SetOutput(io.Discard)
	var s server.Config
	BindServeFlags(fs, &s)
	cfg := DefaultConfig()
	BindFlags(fs, &cfg)
	if err := fs.Parse(args); err != nil {
		return false
	}
	return s.Replica
}

// checkReplicaConfig refuses replica settings that cannot work.
func checkReplicaConfig(cfg *Config) error {
	if !strings.HasPrefix(cfg.Store, "s3://") {
		return errors.New("--replica serves from an S3 store: give --store s3://bucket/prefix?endpoint=...&region=... (the primary's)")
	}
	if cfg.Serve.HTTPSAddr != "" {
		return errors.New("--replica serves plain HTTP (--http): put replicas behind a load balancer or CDN that terminates TLS")
	}
	return nil
}

// runReplica is `sitedrop serve --replica`: it serves the sites the
// primary publishes to --store, on --http, until SIGINT or SIGTERM.
func runReplica(ctx context.Context, cfg *Config, out, logs io.Writer) error {
	if err := checkReplicaConfig(cfg); err != nil {
		return err
	}
	s3, err := openS3Store(cfg.Store)
	if err != nil {
		return err
	}
	proxies, err := server.ParseProxies(cfg.TrustedProxies)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	rep := replica.New(replica.Config{
		Objects: s3, Blobs: s3, Logger: logger,
		Server: replicaServerOptions(cfg, proxies),
	})
	ln, err := net.Listen("tcp", cfg.Serve.HTTPAddr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: rep, ConnContext: serve.ConnContext}
	cfg.Serve.SetTimeouts(srv)
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	go rep.Run(ctx)
	fmt.Fprintf(out, "sitedrop replica serving the sites of %s at http://%s\n", s3.Location().Bucket, ln.Addr())
	errc := make(chan error, 1)
	go func() {
		errc <- srv.Serve(serve.NewListener(ln, serve.NewConnLimit(cfg.Serve.MaxConnsPerIP, proxies), nil))
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), cfg.Serve.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// replicaServerOptions are a replica's site server options: as on the
// primary, the gate's password attempts count the client behind
// --trusted-proxies (X-Forwarded-For), not the load balancer every
// request comes from; and behind a load balancer that terminates TLS
// (an https --public-url) the gate's cookie is Secure and __Host-.
func replicaServerOptions(cfg *Config, proxies server.TrustedProxies) serve.ServerOptions {
	return serve.ServerOptions{
		ContentCacheBytes: cfg.ContentCache,
		ClientIP:          proxies.ClientIP,
		SecureCookies:     cfg.siteOverTLS,
	}
}
