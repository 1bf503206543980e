package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
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

// TLS is what --https needs from the rest of sitedrop: build it once,
// complete, when the server's listen address is known (OnServe), then
// call Prepare.
type TLS struct {
	// Config is the serve command's settings.
	Config Config
	// Hosts tells site hosts from the web host.
	Hosts sites.HostSplit
	// Live reports whether slug has a live site right now; given a
	// preview label ("v12--my-site"), whether that preview is served.
	Live func(slug string) bool
	// SiteClass is the certificate class of the live site slug (whose
	// share of --new-certs-per-hour it takes).
	SiteClass func(slug string) (certs.Class, error)
	// DomainCertificate refuses name unless it is a verified custom
	// domain, which may have a certificate (nil: none is).
	DomainCertificate func(name string) error
	// RedirectDomain tells whether the Host of a plain HTTP request (with
	// its port) is a verified custom domain, sent to https, and under
	// which name (see certs.RedirectHandler); nil: none is.
	RedirectDomain func(hostport string) (host string, ok bool)
	// HTTPSPort is the port of https URLs ("" for 443): the public URL's
	// when one is set, else the HTTPS listener's.
	HTTPSPort string
	// StorageDir is where certificates and ACME accounts are kept (see
	// CertStorageDir).
	StorageDir string
	// Logger receives the certificate manager's and the plain HTTP
	// listener's errors.
	Logger *slog.Logger
	// CertEvents, when set, is told of every certificate event (see
	// certs.Config.OnEvent): the metrics count them.
	CertEvents func(event string, data map[string]any)
}

// TLSServing is what --https adds to a serving app: the certificate
// manager and the plain HTTP listener for challenges and redirects.
type TLSServing struct {
	// Certs is the certificate manager.
	Certs *certs.Manager
	// HTTP is the plain HTTP server once started; nil with --http "".
	HTTP *http.Server

	tls          *TLS
	httpListener net.Listener
	// stopCerts ends certificate management.
	stopCerts context.CancelFunc
}

// Prepare, for a server started with --https, replaces PocketBase's
// autocert with certmagic and binds the plain HTTP listener (so a busy
// port fails the start), whose connections count against conns with the
// main listener's: one cap per client. Call Start once the HTTPS listener
// is bound; Close undoes everything when the start fails.
func (t *TLS) Prepare(se *core.ServeEvent, conns *serve.ConnLimit) (*TLSServing, error) {
	s := t.Config
	ts := &TLSServing{tls: t}
	if s.HTTPAddr != "" {
		ln, err := net.Listen("tcp", s.HTTPAddr)
		if err != nil {
			return nil, fmt.Errorf("listen on --http %s: %w", s.HTTPAddr, err)
		}
		ts.httpListener = serve.LimitListener(ln, conns)
	}
	httpPort := 0
	if ts.httpListener != nil {
		httpPort = ts.httpListener.Addr().(*net.TCPAddr).Port
	}
	_, httpsPort, err := SplitListenAddr(se.Server.Addr)
	if err != nil {
		ts.Close()
		return nil, fmt.Errorf("--https %s: %w", se.Server.Addr, err)
	}
	var brought *tls.Certificate
	if s.TLSCert != "" {
		pair, err := certs.LoadKeyPair(s.TLSCert, s.TLSKey, time.Now())
		if err != nil {
			ts.Close()
			return nil, err
		}
		brought = &pair
	}
	webHost, sitesDomain := t.Hosts.Domains()
	m, err := certs.New(certs.Config{
		WebHost:     webHost,
		SitesDomain: sitesDomain,
		Allow: func(_ context.Context, name string) (certs.Class, error) {
			return t.AllowCertificate(name)
		},
		StorageDir:      t.StorageDir,
		Logger:          t.Logger,
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
		OnEvent:         t.CertEvents,
		Certificate:     brought,
		CertFile:        s.TLSCert,
		KeyFile:         s.TLSKey,
	})
	if err != nil {
		ts.Close()
		return nil, err
	}
	ts.Certs = m
	// PocketBase's autocert is left unused: its HTTP handler is not
	// started (the serve command passes no HttpAddr) and its certificates
	// are no longer asked for.
	se.Server.TLSConfig = m.TLSConfig()
	return ts, nil
}

// CertStorageDir is where certificates and ACME accounts are stored:
// inside PocketBase's autocert cache dir, which its backups leave out (no
// private keys in backup archives) and its restores leave in place.
func CertStorageDir(app core.App) string {
	return filepath.Join(app.DataDir(), core.LocalAutocertCacheDirName, "certmagic")
}

// AllowCertificate tells whether name may have an on-demand certificate,
// and whose it is (its share of --new-certs-per-hour): www.<web host>
// (the server's: owned), hosts of sites that are live right now (see
// SiteClass), and verified custom domains (owned: only accounts add them;
// pending or unknown ones are refused). A preview host
// (<label>--<slug>.<sites-domain>) is allowed exactly when its version or
// alias exists and its site is: Live serves the preview only then, and
// its class is its site's.
func (t *TLS) AllowCertificate(name string) (certs.Class, error) {
	if t.Hosts.IsWWWWebHost(name) {
		return certs.Owned, nil
	}
	label, isSite := t.Hosts.SiteLabel(name)
	if !isSite && !t.Hosts.IsWebHost(name) {
		if t.DomainCertificate == nil {
			return certs.Owned, fmt.Errorf("no certificate for %q: not a sitedrop host", name)
		}
		return certs.Owned, t.DomainCertificate(name)
	}
	if !isSite || label == "" {
		return certs.Owned, fmt.Errorf("no certificate for %q: not a sitedrop host", name)
	}
	if !t.Live(label) {
		return certs.Owned, fmt.Errorf("no certificate for %q: no live site %q", name, label)
	}
	return t.SiteClass(sites.PreviewBase(label))
}

// RedirectHandler is the plain HTTP listener's handler when serving TLS
// (see certs.RedirectHandler): app answers /api/health, challenges the
// ACME HTTP-01 challenges, and the rest goes to https on HTTPSPort.
// Verified custom domains (RedirectDomain) are sent to https too.
func (t *TLS) RedirectHandler(app http.Handler, challenges func(http.Handler) http.Handler) http.Handler {
	return certs.RedirectHandler(t.Hosts, t.HTTPSPort, app, challenges, t.RedirectDomain)
}

// Start serves the plain HTTP listener and starts obtaining and renewing
// the managed certificates. main is the main server: its handler answers
// /api/health, and its error log (PocketBase's, to the app's debug log)
// takes the plain listener's errors too.
func (ts *TLSServing) Start(main *http.Server) error {
	if ts.httpListener != nil {
		ts.HTTP = &http.Server{
			Handler:        ts.tls.RedirectHandler(main.Handler, ts.Certs.HTTPChallengeHandler),
			ReadTimeout:    30 * time.Second,
			WriteTimeout:   30 * time.Second,
			MaxHeaderBytes: 64 << 10,
			ErrorLog:       main.ErrorLog,
		}
		ts.tls.Config.SetTimeouts(ts.HTTP)
		go func() {
			if err := ts.HTTP.Serve(ts.httpListener); err != nil && !errors.Is(err, http.ErrServerClosed) {
				ts.tls.Logger.Error("plain HTTP listener stopped", "error", err)
			}
		}()
	}
	ctx, cancel := context.WithCancel(context.Background())
	ts.stopCerts = cancel
	return ts.Certs.Start(ctx)
}

// Close stops certificate management and closes the plain HTTP listener
// at once (shutdown drains it first, see BindGracefulShutdown).
func (ts *TLSServing) Close() {
	if ts.stopCerts != nil {
		ts.stopCerts()
	}
	if ts.Certs != nil {
		ts.Certs.Stop()
	}
	if ts.HTTP != nil {
		ts.HTTP.Close()
	} else if ts.httpListener != nil {
		ts.httpListener.Close()
	}
}

// BindCleanup stops certificate management when app terminates, after
// the servers have drained.
func (ts *TLSServing) BindCleanup(app core.App) {
	app.OnTerminate().Bind(&hook.Handler[*core.TerminateEvent]{
		Id: "sitedropTLSCleanup",
		Func: func(e *core.TerminateEvent) error {
			ts.Close()
			return e.Next()
		},
	})
}

// SplitListenAddr splits a listen address into host and numeric port
// (":https" is 443).
func SplitListenAddr(addr string) (string, int, error) {
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
