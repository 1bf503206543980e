package hooks

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"time"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/hook"

	"sitedrop/hooks/server/certs"
	"sitedrop/sites"
	"sitedrop/sites/serve"
)

// DNSProviderFactory builds a DNS provider for DNS-01 challenges (see
// certs.DNSProviderFactory).
type DNSProviderFactory = certs.DNSProviderFactory

// RegisterDNSProvider makes a DNS provider available to --dns-provider
// under name. A self-hoster whose DNS is elsewhere registers any libdns
// provider (github.com/libdns/...) from their own main package. It is
// certs.RegisterDNSProvider.
func RegisterDNSProvider(name string, factory DNSProviderFactory) {
	certs.RegisterDNSProvider(name, factory)
}

// tlsServing is what --https adds to a serving app: the certificate
// manager and the plain HTTP listener for challenges and redirects.
type tlsServing struct {
	certs *certs.Manager
	// http is the plain HTTP server; nil with --http "".
	http         *http.Server
	httpListener net.Listener
	// stopCerts ends certificate management.
	stopCerts context.CancelFunc
}

// prepareTLS, for a server started with --https, replaces PocketBase's
// autocert with certmagic and binds the plain HTTP listener (so a busy
// port fails the start). Call start once the HTTPS listener is bound;
// close undoes everything when the start fails.
func (sd *sitedrop) prepareTLS(se *core.ServeEvent, conns *serve.ConnLimit) (*tlsServing, error) {
	s := sd.cfg.Serve
	ts := &tlsServing{}
	if s.HTTPAddr != "" {
		ln, err := net.Listen("tcp", s.HTTPAddr)
		if err != nil {
			return nil, fmt.Errorf("listen on --http %s: %w", s.HTTPAddr, err)
		}
		// counted with the main listener's connections: one cap per client
		ts.httpListener = serve.LimitListener(ln, conns)
	}
	httpPort := 0
	if ts.httpListener != nil {
		httpPort = ts.httpListener.Addr().(*net.TCPAddr).Port
	}
	_, httpsPort, err := splitListenAddr(se.Server.Addr)
	if err != nil {
		ts.close()
		return nil, fmt.Errorf("--https %s: %w", se.Server.Addr, err)
	}
	webHost, sitesDomain := sd.hosts.Domains()
	m, err := certs.New(certs.Config{
		WebHost:     webHost,
		SitesDomain: sitesDomain,
		Allow: func(_ context.Context, name string) (certs.Class, error) {
			return sd.allowCertificate(name)
		},
		StorageDir:      certStorageDir(sd.app),
		Logger:          sd.app.Logger(),
		LogOutput:       s.Logs,
		CA:              s.ACMECA,
		CARoot:          s.ACMECARoot,
		Email:           s.ACMEEmail,
		DNSProvider:     s.DNSProvider,
		DNSResolvers:    s.DNSResolvers,
		NewCertsPerHour: s.NewCertsPerHour,
		HTTPPort:        httpPort,
		HTTPSPort:       httpsPort,
		DisableTLSALPN:  s.DisableTLSALPN,
	})
	if err != nil {
		ts.close()
		return nil, err
	}
	ts.certs = m
	sd.tlsCerts.Store(m)
	// PocketBase's autocert is left unused: its HTTP handler is not
	// started (the serve command passes no HttpAddr) and its certificates
	// are no longer asked for.
	se.Server.TLSConfig = m.TLSConfig()
	return ts, nil
}

// certStorageDir is where certificates and ACME accounts are stored:
// inside PocketBase's autocert cache dir, which its backups leave out (no
// private keys in backup archives) and its restores leave in place.
func certStorageDir(app core.App) string {
	return filepath.Join(app.DataDir(), core.LocalAutocertCacheDirName, "certmagic")
}

// allowCertificate tells whether name may have an on-demand certificate,
// and whose it is (its share of --new-certs-per-hour): www.<web host>
// (the server's: owned), hosts of sites that are live right now (owned
// when the site has an owner, else anonymous), and verified custom
// domains (owned: only accounts add them; pending or unknown ones are
// refused).
func (sd *sitedrop) allowCertificate(name string) (certs.Class, error) {
	if sd.hosts.IsWWWWebHost(name) {
		return certs.Owned, nil
	}
	slug, isSite := sd.hosts.Site(name)
	if !isSite && !sd.hosts.IsWebHost(name) {
		return certs.Owned, sd.allowDomainCertificate(name)
	}
	if !isSite || slug == "" {
		return certs.Owned, fmt.Errorf("no certificate for %q: not a sitedrop host", name)
	}
	if !sd.server.Live(slug) {
		return certs.Owned, fmt.Errorf("no certificate for %q: no live site %q", name, slug)
	}
	return sd.siteClass(slug)
}

// siteClass is the certificate class of a live site: anonymous when the
// deployment has no owner.
func (sd *sitedrop) siteClass(slug string) (certs.Class, error) {
	rec, err := sd.app.FindFirstRecordByData(sites.DeploymentsCollection, "slug", slug)
	if err != nil {
		return certs.Owned, fmt.Errorf("no certificate for site %q: %w", slug, err)
	}
	if rec.GetString("owner") == "" {
		return certs.Anonymous, nil
	}
	return certs.Owned, nil
}

// start serves the plain HTTP listener and starts obtaining and renewing
// the managed certificates. main is the main server: its handler answers
// /api/health, and its error log (PocketBase's, to the app's debug log)
// takes the plain listener's errors too.
func (ts *tlsServing) start(sd *sitedrop, main *http.Server) error {
	if ts.httpListener != nil {
		ts.http = &http.Server{
			Handler:        sd.httpRedirectHandler(main.Handler, ts.certs.HTTPChallengeHandler),
			ReadTimeout:    30 * time.Second,
			WriteTimeout:   30 * time.Second,
			MaxHeaderBytes: 64 << 10,
			ErrorLog:       main.ErrorLog,
		}
		sd.cfg.Serve.SetTimeouts(ts.http)
		go func() {
			if err := ts.http.Serve(ts.httpListener); err != nil && !errors.Is(err, http.ErrServerClosed) {
				sd.app.Logger().Error("plain HTTP listener stopped", "error", err)
			}
		}()
	}
	ctx, cancel := context.WithCancel(context.Background())
	ts.stopCerts = cancel
	return ts.certs.Start(ctx)
}

// close stops certificate management and closes the plain HTTP listener
// at once (shutdown drains it first, see server.BindGracefulShutdown).
func (ts *tlsServing) close() {
	if ts.stopCerts != nil {
		ts.stopCerts()
	}
	if ts.certs != nil {
		ts.certs.Stop()
	}
	if ts.http != nil {
		ts.http.Close()
	} else if ts.httpListener != nil {
		ts.httpListener.Close()
	}
}

// bindTLSCleanup stops certificate management when the app terminates,
// after the servers have drained.
func (sd *sitedrop) bindTLSCleanup(ts *tlsServing) {
	sd.app.OnTerminate().Bind(&hook.Handler[*core.TerminateEvent]{
		Id: "sitedropTLSCleanup",
		Func: func(e *core.TerminateEvent) error {
			ts.close()
			return e.Next()
		},
	})
}

// httpRedirectHandler is the plain HTTP listener's handler when serving
// TLS (see certs.RedirectHandler): app answers /api/health, challenges
// the ACME HTTP-01 challenges, and the rest goes to https on httpsPort.
// Verified custom domains are sent to https too.
func (sd *sitedrop) httpRedirectHandler(app http.Handler, challenges func(http.Handler) http.Handler) http.Handler {
	return certs.RedirectHandler(sd.hosts, sd.httpsPort(), app, challenges, func(hostport string) (string, bool) {
		host, _ := splitHostPortLoose(hostport)
		return host, sd.allowDomainCertificate(host) == nil
	})
}

// httpsPort is the port of https URLs: the public URL's when one is set,
// else the HTTPS listener's ("" when neither names one: 443).
func (sd *sitedrop) httpsPort() string {
	if port, ok := publicHTTPSPort(sd.cfg.PublicURL); ok {
		return port
	}
	return sd.cfg.listenPort
}

// splitListenAddr splits a listen address into host and numeric port
// (":https" is 443).
func splitListenAddr(addr string) (string, int, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		p, lerr := net.LookupPort("tcp", port)
		if lerr != nil {
			return "", 0, errors.Join(err, lerr)
		}
		n = p
	}
	return host, n, nil
}
