package certs

import (
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/caddyserver/certmagic"
)

// BenchmarkHandshake is a full TLS 1.3 handshake (no resumption) against
// the Manager's TLSConfig, client and server in process over net.Pipe,
// the server answering two bytes. Servers:
//
//   - stdlib: a bare tls.Config with the certificate (the floor);
//   - brought: the operator's wildcard (--tls-cert), unmanaged in the cache;
//   - ondemand: a site's certificate as on-demand mode holds it (managed,
//     loaded from storage into the cache), whose handshakes go through
//     certmagic's per-handshake maintenance check.
//
// Clients offer X25519 only (what nginx with OpenSSL 3.0 takes), or the
// hybrid X25519MLKEM768 first, as browsers and Go do. Run with
// -cpuprofile to see where a handshake's time goes.
func BenchmarkHandshake(b *testing.B) {
	now := time.Now()
	certPEM, keyPEM := selfSigned(b, now.Add(-time.Hour), now.Add(90*24*time.Hour), "*.sites.test", "sites.test")
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		b.Fatal(err)
	}
	siteCert, siteKey := selfSigned(b, now.Add(-time.Hour), now.Add(90*24*time.Hour), "alice-site.sites.test")

	servers := []struct {
		name string
		make func(b *testing.B) *tls.Config
		sni  string
	}{
		{"stdlib", func(*testing.B) *tls.Config {
			return &tls.Config{Certificates: []tls.Certificate{pair}, NextProtos: []string{"h2", "http/1.1"}}
		}, "alice-site.sites.test"},
		{"brought", func(b *testing.B) *tls.Config {
			return benchManager(b, &pair).TLSConfig()
		}, "alice-site.sites.test"},
		{"ondemand", func(b *testing.B) *tls.Config {
			m := benchManager(b, nil)
			cacheManaged(b, m, "alice-site.sites.test", siteCert, siteKey)
			return m.TLSConfig()
		}, "alice-site.sites.test"},
	}
	clients := []struct {
		name   string
		curves []tls.CurveID
	}{
		{"x25519", []tls.CurveID{tls.X25519}},
		{"x25519mlkem768", []tls.CurveID{tls.X25519MLKEM768, tls.X25519}},
	}
	for _, s := range servers {
		for _, c := range clients {
			b.Run(s.name+"/"+c.name, func(b *testing.B) {
				server := s.make(b)
				client := &tls.Config{
					ServerName:         s.sni,
					InsecureSkipVerify: true, // the client's work, not the server's
					MinVersion:         tls.VersionTLS13,
					CurvePreferences:   c.curves,
					NextProtos:         []string{"http/1.1"},
				}
				b.ReportAllocs()
				for b.Loop() {
					handshakeOnce(b, server, client)
				}
			})
		}
	}
}

// cacheManaged stores a certificate for name as an ACME order would have
// and loads it into the cache, managed by the sites config: a site's
// certificate in on-demand mode, after its first handshake or a restart.
func cacheManaged(tb testing.TB, m *Manager, name string, certPEM, keyPEM []byte) {
	tb.Helper()
	ctx := context.Background()
	ik := m.siteIssuer.IssuerKey()
	for key, val := range map[string][]byte{
		certmagic.StorageKeys.SiteCert(ik, name):       certPEM,
		certmagic.StorageKeys.SitePrivateKey(ik, name): keyPEM,
		certmagic.StorageKeys.SiteMeta(ik, name):       []byte(`{"sans":["` + name + `"]}`),
	} {
		if err := m.storage.Store(ctx, key, val); err != nil {
			tb.Fatal(err)
		}
	}
	if _, err := m.sites.CacheManagedCertificate(ctx, name); err != nil {
		tb.Fatal(err)
	}
}

// handshakeOnce runs one handshake over a pipe; the server then writes
// two bytes, which the client reads (so it reads the session ticket too).
// The pipes are closed without a close_notify.
func handshakeOnce(b testing.TB, server, client *tls.Config) tls.ConnectionState {
	c1, c2 := net.Pipe()
	done := make(chan error, 1)
	go func() {
		s := tls.Server(c2, server)
		err := s.Handshake()
		if err == nil {
			_, err = s.Write([]byte("ok"))
		}
		c2.Close() // no close_notify: both sides writing one would block the pipe
		done <- err
	}()
	c := tls.Client(c1, client)
	if err := c.Handshake(); err != nil {
		b.Fatal(err)
	}
	var buf [2]byte
	if _, err := io.ReadFull(c, buf[:]); err != nil {
		b.Fatal(err)
	}
	c1.Close()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	return c.ConnectionState()
}

// benchManager is a Manager for web.test and sites.test, in on-demand
// mode, whose CA is never asked, with cert brought (nil: none).
func benchManager(b testing.TB, cert *tls.Certificate) *Manager {
	b.Helper()
	m, err := New(Config{
		WebHost:     "web.test",
		SitesDomain: "sites.test",
		Allow: func(context.Context, string) (Class, error) {
			return Owned, nil
		},
		StorageDir:      b.TempDir(),
		Logger:          slog.New(slog.DiscardHandler),
		LogOutput:       io.Discard,
		CA:              "https://127.0.0.1:1/dir", // never asked
		NewCertsPerHour: 0,
		HTTPPort:        80,
		HTTPSPort:       443,
		Certificate:     cert,
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(m.Stop)
	return m
}

// TestHandshakePath: a site's on-demand certificate in the cache is served
// without asking the on-demand decision again; a returning client resumes
// its TLS 1.3 session (tickets are on, their keys rotated by crypto/tls),
// so no certificate is looked up or signed for; a client offering the
// hybrid post-quantum key share gets it (Go's default, kept: see
// bench/README.md), and one offering X25519 only gets X25519.
func TestHandshakePath(t *testing.T) {
	now := time.Now()
	siteCert, siteKey := selfSigned(t, now.Add(-time.Hour), now.Add(90*24*time.Hour), "alice-site.sites.test")
	m := benchManager(t, nil)
	cacheManaged(t, m, "alice-site.sites.test", siteCert, siteKey)
	asked := 0
	decide := m.sites.OnDemand.DecisionFunc
	m.sites.OnDemand.DecisionFunc = func(ctx context.Context, name string) error {
		asked++
		return decide(ctx, name)
	}
	server := m.TLSConfig()
	if server.SessionTicketsDisabled {
		t.Error("session tickets are disabled")
	}
	client := &tls.Config{
		ServerName:         "alice-site.sites.test",
		InsecureSkipVerify: true,
		ClientSessionCache: tls.NewLRUClientSessionCache(8),
		NextProtos:         []string{"h2", "http/1.1"},
	}
	first := handshakeOnce(t, server, client)
	if first.DidResume || first.NegotiatedProtocol != "h2" || first.Version != tls.VersionTLS13 {
		t.Errorf("first handshake: resumed %v, ALPN %q, version %x", first.DidResume, first.NegotiatedProtocol, first.Version)
	}
	if first.CurveID != tls.X25519MLKEM768 {
		t.Errorf("key exchange %v with Go's default client; want X25519MLKEM768", first.CurveID)
	}
	if again := handshakeOnce(t, server, client); !again.DidResume {
		t.Error("a returning client did not resume its session")
	}
	x := client.Clone()
	x.ClientSessionCache, x.CurvePreferences = nil, []tls.CurveID{tls.X25519}
	if st := handshakeOnce(t, server, x); st.CurveID != tls.X25519 || st.DidResume {
		t.Errorf("X25519-only client: key exchange %v, resumed %v", st.CurveID, st.DidResume)
	}
	if asked != 0 {
		t.Errorf("the on-demand decision was asked %d times for a cached certificate", asked)
	}
}
