package hooks

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/caddyserver/certmagic"
	"github.com/pocketbase/pocketbase/core"
)

// certmagicProductionCA is the default ACME directory: Let's Encrypt.
const certmagicProductionCA = certmagic.LetsEncryptProductionCA

// maxCachedCerts bounds the certificates held in memory; more are loaded
// from storage on their next handshake.
const maxCachedCerts = 10000

// certManager obtains and renews the TLS certificates of a serving app
// through ACME. There are two modes:
//
//   - On demand (the default): the web host's certificate is obtained at
//     start, and a site's certificate during the first TLS handshake that
//     names it, but only for a slug that exists and is live at that moment.
//     Any other name gets no certificate: the handshake is refused.
//   - Wildcard (--dns-provider): one *.<sites-domain> certificate, and one
//     for the web host unless the wildcard covers it, obtained at start
//     through DNS-01. Handshakes never wait for an ACME order.
//
// Certificates and the ACME account are kept under the data dir, so a
// restart reuses them without a new order.
type certManager struct {
	magic  *certmagic.Config
	issuer *certmagic.ACMEIssuer
	cache  *certmagic.Cache
	// managed are the names obtained at start and renewed in the
	// background.
	managed []string
}

// certStorageDir is where certificates and ACME accounts are stored:
// inside PocketBase's autocert cache dir, which its backups leave out (no
// private keys in backup archives) and its restores leave in place.
func certStorageDir(app core.App) string {
	return filepath.Join(app.DataDir(), core.LocalAutocertCacheDirName, "certmagic")
}

// newCertManager builds the certificate manager for the serve settings s.
// httpAddr and httpsAddr are the addresses really listened on: ACME
// challenges are answered there.
func newCertManager(sd *sitedrop, s ServeConfig, httpAddr, httpsAddr string) (*certManager, error) {
	logger := newZapLogger(sd.app.Logger().With("component", "tls"), sd.cfg.Serve.logOutput())
	roots, err := loadRoots(s.ACMECARoot)
	if err != nil {
		return nil, err
	}

	m := &certManager{}
	m.cache = certmagic.NewCache(certmagic.CacheOptions{
		GetConfigForCert: func(certmagic.Certificate) (*certmagic.Config, error) { return m.magic, nil },
		Capacity:         maxCachedCerts,
		Logger:           logger,
	})
	m.magic = certmagic.New(m.cache, certmagic.Config{
		Storage: &certmagic.FileStorage{Path: certStorageDir(sd.app)},
		Logger:  logger,
	})

	tmpl := certmagic.ACMEIssuer{
		CA:           s.ACMECA,
		TestCA:       s.ACMECA, // a retry goes to the same CA...
		Email:        s.ACMEEmail,
		Agreed:       true,
		TrustedRoots: roots,
		Logger:       logger,
	}
	if s.ACMECA == certmagic.LetsEncryptProductionCA {
		// ...except with Let's Encrypt, whose staging CA takes retries so
		// that failures do not use up production rate limits.
		tmpl.TestCA = certmagic.LetsEncryptStagingCA
	}
	// Challenges are answered by our own listeners: tell certmagic where
	// they are, so it never binds ports of its own.
	if httpAddr == "" {
		tmpl.DisableHTTPChallenge = true
	} else if host, port, err := splitListenAddr(httpAddr); err == nil {
		tmpl.ListenHost, tmpl.AltHTTPPort = host, port
	}
	if host, port, err := splitListenAddr(httpsAddr); err == nil {
		tmpl.ListenHost, tmpl.AltTLSALPNPort = host, port
	}

	domain, sitesDomain := sd.hosts.Domains()
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
		m.managed = wildcardNames(domain, sitesDomain)
	} else {
		m.magic.OnDemand = &certmagic.OnDemandConfig{DecisionFunc: sd.allowCertificate}
		m.managed = []string{domain}
	}
	m.issuer = certmagic.NewACMEIssuer(m.magic, tmpl)
	m.magic.Issuers = []certmagic.Issuer{m.issuer}
	return m, nil
}

// wildcardNames are the names of wildcard mode: *.<sites-domain>, and
// the web host unless the wildcard already covers it.
func wildcardNames(domain, sitesDomain string) []string {
	names := []string{"*." + sitesDomain}
	if parent, ok := strings.CutPrefix(domain, firstLabel(domain)+"."); !ok || parent != sitesDomain {
		names = append([]string{domain}, names...)
	}
	return names
}

// firstLabel is a host name's leftmost label.
func firstLabel(host string) string {
	label, _, _ := strings.Cut(host, ".")
	return label
}

// tlsConfig is the HTTPS server's TLS configuration: certificates from
// the manager, HTTP/2, and the ACME TLS-ALPN-01 protocol.
func (m *certManager) tlsConfig() *tls.Config {
	tc := m.magic.TLSConfig()
	tc.NextProtos = append([]string{"h2", "http/1.1"}, tc.NextProtos...)
	tc.MinVersion = tls.VersionTLS12
	return tc
}

// start obtains (or loads from storage) the managed certificates and
// keeps them renewed, in the background: a CA that is down does not stop
// the server from starting.
func (m *certManager) start(ctx context.Context) error {
	if err := m.magic.ManageAsync(ctx, m.managed); err != nil {
		return fmt.Errorf("manage certificates for %s: %w", strings.Join(m.managed, ", "), err)
	}
	return nil
}

// stop ends the background renewals.
func (m *certManager) stop() {
	m.cache.Stop()
}

// allowCertificate is the on-demand decision: a certificate may be
// obtained (or renewed) for the web host and for live sites only. Asked
// during handshakes for names with no certificate in memory or storage.
func (sd *sitedrop) allowCertificate(_ context.Context, name string) error {
	name = strings.ToLower(strings.TrimSuffix(name, "."))
	if sd.hosts.IsWebHost(name) {
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
