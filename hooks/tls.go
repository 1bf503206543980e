package hooks

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/certmagic"
	"github.com/pocketbase/pocketbase/core"
)

// certmagicProductionCA is the default ACME directory: Let's Encrypt.
const certmagicProductionCA = certmagic.LetsEncryptProductionCA

// maxCachedCerts bounds the certificates held in memory; more are loaded
// from storage on their next handshake.
const maxCachedCerts = 10000

// certManager obtains and renews the TLS certificates of a serving app
// through ACME. It holds two certmagic configs over one cache and one
// storage:
//
//   - web: the web host's certificate, obtained at start (HTTP-01 or
//     TLS-ALPN-01) and renewed in the background.
//   - sites: in on-demand mode (the default), a site's certificate is
//     obtained during the first TLS handshake that names it, but only for
//     a slug that exists and is live at that moment, and within the
//     hourly budget of new certificates (--new-certs-per-hour); any other
//     name gets no certificate and the handshake is refused. It is renewed
//     during a handshake once due. In wildcard mode (--dns-provider), one
//     *.<sites-domain> certificate is obtained at start through DNS-01 and
//     renewed in the background; handshakes never wait for an order.
//
// Certificates and the ACME account are kept under the data dir, so a
// restart reuses them without a new order.
type certManager struct {
	web, sites            *certmagic.Config
	webIssuer, siteIssuer *certmagic.ACMEIssuer
	cache                 *certmagic.Cache
	storage               certmagic.Storage
	webHost               string
	// wildcard is "*.<sites-domain>" in wildcard mode, "" on demand.
	wildcard string
}

// certStorageDir is where certificates and ACME accounts are stored:
// inside PocketBase's autocert cache dir, which its backups leave out (no
// private keys in backup archives) and its restores leave in place.
func certStorageDir(app core.App) string {
	return filepath.Join(app.DataDir(), core.LocalAutocertCacheDirName, "certmagic")
}

// newCertManager builds the certificate manager for the serve settings s.
// httpPort and httpsPort are the ports really listened on (0: no plain
// HTTP listener): ACME challenges are answered there.
func newCertManager(sd *sitedrop, s ServeConfig, httpPort, httpsPort int) (*certManager, error) {
	logger := newZapLogger(sd.app.Logger().With("component", "tls"), s.logOutput())
	roots, err := loadRoots(s.ACMECARoot)
	if err != nil {
		return nil, err
	}
	webHost, sitesDomain := sd.hosts.Domains()
	m := &certManager{
		storage: &certmagic.FileStorage{Path: certStorageDir(sd.app)},
		webHost: webHost,
	}
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
	m.web = certmagic.New(m.cache, certmagic.Config{Storage: m.storage, Logger: logger})
	m.sites = certmagic.New(m.cache, certmagic.Config{Storage: m.storage, Logger: logger})

	tmpl := certmagic.ACMEIssuer{
		CA:           s.ACMECA,
		TestCA:       s.ACMECA, // a retry goes to the same CA...
		Email:        s.ACMEEmail,
		Agreed:       true,
		TrustedRoots: roots,
		Logger:       logger,
		// Challenges are answered by our own listeners. certmagic still
		// tries to bind the port first; with no host, that bind conflicts
		// with ours whatever address we listen on, and certmagic then
		// relies on us.
		ListenHost:              "",
		AltHTTPPort:             httpPort,
		AltTLSALPNPort:          httpsPort,
		DisableHTTPChallenge:    httpPort == 0,
		DisableTLSALPNChallenge: s.disableTLSALPN,
	}
	if s.ACMECA == certmagic.LetsEncryptProductionCA {
		// ...except with Let's Encrypt, whose staging CA takes retries so
		// that failures do not use up production rate limits.
		tmpl.TestCA = certmagic.LetsEncryptStagingCA
	}
	m.webIssuer = certmagic.NewACMEIssuer(m.web, tmpl)
	m.web.Issuers = []certmagic.Issuer{m.webIssuer}

	if s.DNSProvider != "" {
		provider, err := newDNSProvider(s.DNSProvider)
		if err != nil {
			return nil, err
		}
		tmpl.DNS01Solver = &certmagic.DNS01Solver{DNSManager: certmagic.DNSManager{
			DNSProvider: provider,
			Resolvers:   s.DNSResolvers,
			Logger:      logger,
		}}
		m.wildcard = "*." + sitesDomain
	} else {
		budget := newOrderBudget(s.NewCertsPerHour, time.Hour)
		m.sites.OnDemand = &certmagic.OnDemandConfig{DecisionFunc: func(ctx context.Context, name string) error {
			return m.allowOnDemand(ctx, sd, budget, name)
		}}
	}
	m.siteIssuer = certmagic.NewACMEIssuer(m.sites, tmpl)
	m.sites.Issuers = []certmagic.Issuer{m.siteIssuer}
	return m, nil
}

// tlsConfig is the HTTPS server's TLS configuration: the web host's
// certificate from the web config, every other name's from the sites
// config; HTTP/2; and the ACME TLS-ALPN-01 protocol.
func (m *certManager) tlsConfig() *tls.Config {
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

// httpChallengeHandler answers ACME HTTP-01 challenges (of either
// config: challenges in progress are shared) and passes other requests
// to next.
func (m *certManager) httpChallengeHandler(next http.Handler) http.Handler {
	return m.webIssuer.HTTPChallengeHandler(next)
}

// start obtains (or loads from storage) the web host's certificate, and
// the wildcard in wildcard mode, and keeps them renewed, in the
// background: a CA that is down does not stop the server from starting.
//
// Certificates already in storage are loaded first, synchronously, so a
// restarted server answers handshakes at once.
func (m *certManager) start(ctx context.Context) error {
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
		_, _ = c.cfg.CacheManagedCertificate(ctx, c.name) // none stored yet: obtained below
		if err := c.cfg.ManageAsync(ctx, []string{c.name}); err != nil {
			return fmt.Errorf("manage the certificate of %s: %w", c.name, err)
		}
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

// stop ends the background renewals.
func (m *certManager) stop() {
	m.cache.Stop()
}

// allowOnDemand is the on-demand decision, asked during a handshake for a
// name with no certificate in memory (before certmagic looks in storage)
// and before an on-demand renewal. It allows www.<web host> (redirected
// to the web host) and live sites only. A name with a certificate in
// storage is a load or a renewal; any other takes one of the hour's new
// certificates, so a burst of anonymous deploys cannot use up the CA's
// rate limits for the whole sites domain.
func (m *certManager) allowOnDemand(ctx context.Context, sd *sitedrop, budget *orderBudget, name string) error {
	name = strings.ToLower(strings.TrimSuffix(name, "."))
	if err := sd.allowCertificate(name); err != nil {
		return err
	}
	if m.storage.Exists(ctx, certmagic.StorageKeys.SiteCert(m.siteIssuer.IssuerKey(), name)) {
		return nil
	}
	if ok, first := budget.allow(name, time.Now()); !ok {
		if first { // once per window, not once per handshake
			sd.app.Logger().Warn("on-demand certificates refused until the next hour: budget used up (--new-certs-per-hour)",
				"name", name)
		}
		return fmt.Errorf("no certificate for %q: the hour's budget of new certificates is used up", name)
	}
	return nil
}

// orderBudget bounds the names that may have a new on-demand certificate
// ordered in each window. A name is charged once per window, however many
// handshakes (or failed orders) it takes. max < 0 allows all; 0 none.
type orderBudget struct {
	max    int
	window time.Duration

	mu      sync.Mutex
	start   time.Time
	charged map[string]bool
	refused bool
}

func newOrderBudget(max int, window time.Duration) *orderBudget {
	return &orderBudget{max: max, window: window, charged: map[string]bool{}}
}

// allow charges name and reports whether it is within the budget; first
// is true for the first refusal of the window.
func (b *orderBudget) allow(name string, now time.Time) (ok, first bool) {
	if b.max < 0 {
		return true, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if now.Sub(b.start) >= b.window {
		b.start, b.refused = now, false
		clear(b.charged)
	}
	if b.charged[name] {
		return true, false
	}
	if len(b.charged) >= b.max {
		first = !b.refused
		b.refused = true
		return false, first
	}
	b.charged[name] = true
	return true, false
}

// allowCertificate tells whether name may have an on-demand certificate:
// www.<web host>, and hosts of sites that are live right now.
func (sd *sitedrop) allowCertificate(name string) error {
	if sd.hosts.IsWWWWebHost(name) {
		return nil
	}
	slug, isSite := sd.hosts.Site(name)
	if !isSite || slug == "" {
		return fmt.Errorf("no certificate for %q: not a sitedrop host", name)
	}
	if !sd.server.Live(slug) {
		return fmt.Errorf("no certificate for %q: no live site %q", name, slug)
	}
	return nil
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
