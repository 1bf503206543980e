// Package certs is sitedrop's TLS stack: the certificate manager (two
// certmagic configs, for the web host and for the sites, over one cache
// and one storage), on-demand certificates within an hourly order budget,
// the wildcard through DNS-01 and its registry of DNS providers, the
// bridge from certmagic's zap logs to slog, and the plain HTTP (:80)
// handler that answers ACME HTTP-01 challenges and health checks and
// redirects the rest to https. What a server decides (which names may
// have a certificate, where certificates are stored, the listen ports) is
// given in a Config; binding to PocketBase's serve and terminate events
// is the caller's. Of ours it imports sites (its host rules) and
// sites/serve (for the answer to a malformed Host), nothing else.
package certs

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/certmagic"
	"go.uber.org/zap"
)

// ProductionCA is the default ACME directory: Let's Encrypt.
const ProductionCA = certmagic.LetsEncryptProductionCA

// maxCachedCerts bounds the certificates held in memory; more are loaded
// from storage on their next handshake.
const maxCachedCerts = 10000

// Config is what a Manager needs of the server it obtains certificates
// for.
type Config struct {
	// WebHost is the web host's name and SitesDomain the domain the sites
	// live under, both normalised (sites.HostSplit.Domains).
	WebHost, SitesDomain string
	// Allow is the server's part of the on-demand decision: whether name
	// (lower case, no final dot) may have a certificate at all, and whose
	// it is (its share of the order budget). The Manager adds the order
	// budget.
	Allow func(ctx context.Context, name string) (Class, error)
	// StorageDir is where certificates and ACME accounts are kept.
	StorageDir string
	// Logger is the app's logger: certificate events go to it (with
	// component=tls), and so does the warning of a used-up budget.
	Logger *slog.Logger
	// LogOutput also receives certificate events, Info and above;
	// nil is os.Stderr.
	LogOutput io.Writer

	// CA is the ACME directory URL (ProductionCA by default).
	CA string
	// CARoot is a PEM file of roots trusted for the CA's own TLS (""
	// for the system roots).
	CARoot string
	// Email is the ACME account's contact address.
	Email string
	// DNSProvider, when set, names the registered DNS provider (see
	// RegisterDNSProvider) of the wildcard mode; "" is on-demand mode.
	DNSProvider string
	// DNSResolvers are the DNS servers asked for DNS-01 (host:port).
	DNSResolvers []string
	// NewCertsPerHour is the on-demand order budget: 0 none, negative no
	// limit. Anonymous names may take at most half of it (rounded down),
	// so owned names always have the rest.
	NewCertsPerHour int
	// HTTPPort and HTTPSPort are the ports really listened on (HTTPPort
	// 0: no plain HTTP listener): ACME challenges are answered there.
	HTTPPort, HTTPSPort int
	// DisableTLSALPN leaves only HTTP-01 (and DNS-01) (tests).
	DisableTLSALPN bool
	// Certificate, when set, is a certificate the operator brings
	// (--tls-cert, see LoadKeyPair), e.g. a wildcard for the sites domain
	// from their own DNS-01 tooling: it is served as is for every name it
	// covers, which never reach ACME (neither the orders at start nor the
	// on-demand ones). sitedrop does not renew it: the operator's tooling
	// does, and a renewed pair is read again from CertFile and KeyFile.
	Certificate *tls.Certificate
	// CertFile and KeyFile, when set with Certificate, are the files it
	// was read from (see LoadKeyPair): they are watched, and a renewed
	// pair is served once they change (see watchBrought).
	CertFile, KeyFile string
	// ReloadEvery is how often those files are checked for a change;
	// 0 is a minute.
	ReloadEvery time.Duration
	// OnEvent, when set, is told of every certificate event of both
	// configs (certmagic's: cert_obtained, cert_failed...), on the
	// goroutine that emits it: it must return at once (the metrics
	// count them).
	OnEvent func(event string, data map[string]any)
}

// Manager obtains and renews the TLS certificates of a serving app
// through ACME. It holds two certmagic configs over one cache and one
// storage:
//
//   - web: the web host's certificate, obtained at start (HTTP-01 or
//     TLS-ALPN-01) and renewed in the background.
//   - sites: in on-demand mode (the default), a site's certificate is
//     obtained during the first TLS handshake that names it, but only for
//     a name the server allows at that moment (Config.Allow), and within
//     the hourly budget of new certificates (Config.NewCertsPerHour, of
//     which anonymous sites may take half); any other name gets no
//     certificate and the handshake is refused. It is renewed during a
//     handshake once due, and dropped from memory at once when its name is
//     released (Forget). A name the server has just begun to allow (a
//     custom domain verified) may be ordered at once, in the background,
//     within the same budget (Obtain), so that its first visitor does not
//     wait for the order. In wildcard mode
//     (Config.DNSProvider), one *.<sites-domain> certificate is obtained
//     at start through DNS-01 and renewed in the background; handshakes
//     never wait for an order.
//
// A certificate the operator brings (Config.Certificate) is served for
// the names it covers in either mode, ahead of both configs: those names
// are neither ordered at start nor on demand.
//
// Certificates and the ACME account are kept in Config.StorageDir, so a
// restart reuses them without a new order.
type Manager struct {
	web, sites            *certmagic.Config
	webIssuer, siteIssuer *certmagic.ACMEIssuer
	cache                 *certmagic.Cache
	storage               certmagic.Storage
	webHost               string
	// wildcard is "*.<sites-domain>" in wildcard mode, "" on demand.
	wildcard string
	// brought is the leaf of the operator's certificate (nil: none),
	// broughtHash its key in the cache, and broughtFiles where it is read
	// from (see watchBrought).
	brought      *x509.Certificate
	broughtHash  string
	broughtFiles broughtFiles
	// decide is the on-demand decision: the server's Config.Allow, then
	// budget, the hour's order budget (both nil in wildcard mode). logger
	// is the app's.
	decide func(ctx context.Context, name string) error
	budget *orderBudget
	logger *slog.Logger
	// The background obtains of Obtain: bg ends them (Stop), obtains
	// counts them, and obtaining holds the one of each name (Forget ends
	// it) under mu, which also keeps a certificate that Forget drops from
	// being cached after it.
	bg        context.Context
	stopBg    context.CancelFunc
	obtains   sync.WaitGroup
	mu        sync.Mutex
	obtaining map[string]*obtainJob
	stopped   bool
}

// New builds the certificate manager for cfg.
func New(cfg Config) (*Manager, error) {
	out := cfg.LogOutput
	if out == nil {
		out = os.Stderr
	}
	logger := newZapLogger(cfg.Logger.With("component", "tls"), out)
	roots, err := loadRoots(cfg.CARoot)
	if err != nil {
		return nil, err
	}
	m := &Manager{
		storage:   &certmagic.FileStorage{Path: cfg.StorageDir},
		webHost:   cfg.WebHost,
		logger:    cfg.Logger,
		obtaining: map[string]*obtainJob{},
	}
	m.bg, m.stopBg = context.WithCancel(context.Background())
	m.cache = certmagic.NewCache(certmagic.CacheOptions{
		GetConfigForCert: func(c certmagic.Certificate) (*certmagic.Config, error) {
			if slices.Contains(c.Names, m.webHost) {
				return m.web, nil
			}
			return m.sites, nil
		},
		Capacity: maxCachedCerts,
		Logger:   logger,
	})
	var onEvent func(context.Context, string, map[string]any) error
	if cfg.OnEvent != nil {
		onEvent = func(_ context.Context, event string, data map[string]any) error {
			cfg.OnEvent(event, data)
			return nil
		}
	}
	m.web = certmagic.New(m.cache, certmagic.Config{Storage: m.storage, Logger: logger, OnEvent: onEvent})
	m.sites = certmagic.New(m.cache, certmagic.Config{Storage: m.storage, Logger: logger, OnEvent: onEvent})

	tmpl := certmagic.ACMEIssuer{
		CA:           cfg.CA,
		TestCA:       cfg.CA, // a retry goes to the same CA...
		Email:        cfg.Email,
		Agreed:       true,
		TrustedRoots: roots,
		Logger:       logger,
		// Challenges are answered by our own listeners. certmagic still
		// tries to bind the port first; with no host, that bind conflicts
		// with ours whatever address we listen on, and certmagic then
		// relies on us.
		ListenHost:              "",
		AltHTTPPort:             cfg.HTTPPort,
		AltTLSALPNPort:          cfg.HTTPSPort,
		DisableHTTPChallenge:    cfg.HTTPPort == 0,
		DisableTLSALPNChallenge: cfg.DisableTLSALPN,
	}
	if cfg.CA == certmagic.LetsEncryptProductionCA {
		// ...except with Let's Encrypt, whose staging CA takes retries so
		// that failures do not use up production rate limits.
		tmpl.TestCA = certmagic.LetsEncryptStagingCA
	}
	m.webIssuer = certmagic.NewACMEIssuer(m.web, tmpl)
	m.web.Issuers = []certmagic.Issuer{m.webIssuer}

	if cfg.DNSProvider != "" {
		provider, err := NewDNSProvider(cfg.DNSProvider)
		if err != nil {
			return nil, err
		}
		tmpl.DNS01Solver = &certmagic.DNS01Solver{DNSManager: certmagic.DNSManager{
			DNSProvider: provider,
			Resolvers:   cfg.DNSResolvers,
			Logger:      logger,
		}}
		m.wildcard = "*." + cfg.SitesDomain
	} else {
		m.budget = newOrderBudget(cfg.NewCertsPerHour, time.Hour)
		m.decide = func(ctx context.Context, name string) error {
			return m.allowOnDemand(ctx, cfg.Allow, cfg.Logger, m.budget, name)
		}
		m.sites.OnDemand = &certmagic.OnDemandConfig{DecisionFunc: m.decide}
	}
	m.siteIssuer = certmagic.NewACMEIssuer(m.sites, tmpl)
	m.sites.Issuers = []certmagic.Issuer{m.siteIssuer}
	if err := m.cacheBrought(cfg.Certificate); err != nil {
		return nil, err
	}
	m.broughtFiles = broughtFiles{cert: cfg.CertFile, key: cfg.KeyFile, every: cfg.ReloadEvery}
	return m, nil
}

// cacheBrought puts the operator's certificate in the cache, unmanaged:
// certmagic's handshake lookup finds it (exactly or through its wildcard)
// before any on-demand decision or order, and never renews it. certmagic
// staples its OCSP response when its issuer has a responder.
func (m *Manager) cacheBrought(cert *tls.Certificate) error {
	if cert == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	hash, err := m.sites.CacheUnmanagedTLSCertificate(ctx, *cert, nil)
	if err != nil {
		return fmt.Errorf("load the --tls-cert certificate: %w", err)
	}
	m.mu.Lock()
	old := m.broughtHash
	m.brought, m.broughtHash = cert.Leaf, hash
	m.mu.Unlock()
	if old == hash {
		return nil // the same certificate, read again
	}
	if old != "" {
		m.cache.Remove([]string{old})
	}
	// through zap: to the app's log and to stderr, where the operator
	// sees which names their certificate serves
	m.sites.Logger.Info("serving the --tls-cert certificate for the names it covers; the others still get certificates through ACME",
		zap.Strings("names", cert.Leaf.DNSNames), zap.Time("expires", cert.Leaf.NotAfter))
	return nil
}

// TLSConfig is the HTTPS server's TLS configuration: the web host's
// certificate from the web config, every other name's from the sites
// config; HTTP/2; and the ACME TLS-ALPN-01 protocol.
func (m *Manager) TLSConfig() *tls.Config {
	tc := m.web.TLSConfig()
	tc.GetCertificate = func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
		// the same normalisation as certmagic's cache lookup, so no odd
		// spelling of the web host reaches the on-demand config
		if strings.ToLower(strings.TrimSpace(hello.ServerName)) == m.webHost {
			return m.web.GetCertificate(hello)
		}
		return m.sites.GetCertificate(hello)
	}
	tc.NextProtos = append([]string{"h2", "http/1.1"}, tc.NextProtos...)
	tc.MinVersion = tls.VersionTLS12
	return tc
}

// Forget drops the on-demand certificate of name from memory, once the
// server no longer allows it (a custom domain released): certmagic asks
// the on-demand decision only for names it holds no certificate for, so
// until then every handshake for name would still get it. The next
// handshake asks the decision again, which refuses it; the certificate
// stays in storage, so a name allowed again loads it without a new order.
// The web host's certificate and the wildcard are never dropped. An
// order Obtain started for name is given up.
func (m *Manager) Forget(name string) {
	name = normalName(name)
	if name == "" || name == m.webHost || name == m.wildcard {
		return
	}
	m.mu.Lock()
	if job := m.obtaining[name]; job != nil {
		job.cancel()
		delete(m.obtaining, name)
	}
	m.mu.Unlock()
	m.cache.RemoveManaged([]certmagic.SubjectIssuer{{Subject: name}})
}

// Cached reports whether the certificate cache holds a certificate for
// name in memory: a handshake for it needs no order and no storage read.
func (m *Manager) Cached(name string) bool {
	return len(m.cache.AllMatchingCertificates(normalName(name))) > 0
}

// normalName is name as certmagic's cache matches it: lower case, no
// space around it, no final dot.
func normalName(name string) string {
	return strings.ToLower(strings.TrimSuffix(strings.TrimSpace(name), "."))
}

// HTTPChallengeHandler answers ACME HTTP-01 challenges (of either
// config: challenges in progress are shared) and passes other requests
// to next.
func (m *Manager) HTTPChallengeHandler(next http.Handler) http.Handler {
	return m.webIssuer.HTTPChallengeHandler(next)
}

// Start obtains (or loads from storage) the web host's certificate, and
// the wildcard in wildcard mode, unless the brought certificate
// (Config.Certificate) covers them, and keeps them renewed, in the
// background until ctx ends: a CA that is down does not stop the server
// from starting.
//
// Certificates already in storage are loaded first, synchronously, so a
// restarted server answers handshakes at once.
func (m *Manager) Start(ctx context.Context) error {
	managed := []struct {
		cfg  *certmagic.Config
		name string
	}{{m.web, m.webHost}}
	if m.wildcard != "" {
		managed = append(managed, struct {
			cfg  *certmagic.Config
			name string
		}{m.sites, m.wildcard})
	}
	for _, c := range managed {
		if covers(m.brought, c.name) {
			continue // the operator's certificate serves it
		}
		_, _ = c.cfg.CacheManagedCertificate(ctx, c.name) // none stored yet: obtained below
		if err := c.cfg.ManageAsync(ctx, []string{c.name}); err != nil {
			return fmt.Errorf("manage the certificate of %s: %w", c.name, err)
		}
	}
	if m.brought != nil && m.broughtFiles.cert != "" {
		go m.watchBrought(ctx)
	}
	// ManageAsync skips its first check (expiry, revocation, renewal
	// window) for certificates already cached: run it now.
	go func() {
		if err := m.cache.RenewManagedCertificates(ctx); err != nil && ctx.Err() == nil {
			m.web.Logger.Error("certificate check at start: " + err.Error())
		}
	}()
	return nil
}

// Stop ends the background renewals and the orders Obtain started, and
// waits for those to return. A second Stop does nothing.
func (m *Manager) Stop() {
	m.mu.Lock()
	stopped := m.stopped
	m.stopped = true
	m.mu.Unlock()
	if stopped {
		return
	}
	m.stopBg()
	m.obtains.Wait()
	m.cache.Stop()
}

// loadRoots reads a PEM file of root certificates (--acme-ca-root). An
// empty path means the system roots.
func loadRoots(path string) (*x509.CertPool, error) {
	if path == "" {
		return nil, nil
	}
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read --acme-ca-root: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("--acme-ca-root %s: no PEM certificate in the file", path)
	}
	return pool, nil
}
