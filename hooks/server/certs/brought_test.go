package certs

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// selfSigned makes a self-signed ECDSA P-256 certificate for names, valid
// from notBefore to notAfter, and returns its PEM and its key's.
func selfSigned(t testing.TB, notBefore, notAfter time.Time, names ...string) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "brought"},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		DNSNames:     names,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

// writeFiles writes each content to a file of its name in a new temporary
// directory and returns their paths, in order.
func writeFiles(t *testing.T, files ...[]byte) []string {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for i, b := range files {
		p := filepath.Join(dir, string(rune('a'+i))+".pem")
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// TestLoadKeyPair: a pair that cannot be served is refused with the
// reason, before anything listens.
func TestLoadKeyPair(t *testing.T) {
	now := time.Now()
	good, goodKey := selfSigned(t, now.Add(-time.Hour), now.Add(90*24*time.Hour), "*.sites.test", "sites.test")
	_, otherKey := selfSigned(t, now.Add(-time.Hour), now.Add(time.Hour), "other.test")
	expired, expiredKey := selfSigned(t, now.Add(-48*time.Hour), now.Add(-time.Hour), "*.sites.test")
	early, earlyKey := selfSigned(t, now.Add(time.Hour), now.Add(48*time.Hour), "*.sites.test")
	noName, noNameKey := selfSigned(t, now.Add(-time.Hour), now.Add(time.Hour))
	missing := filepath.Join(t.TempDir(), "none.pem")

	f := writeFiles(t, good, goodKey)
	pair, err := LoadKeyPair(f[0], f[1], now)
	if err != nil {
		t.Fatalf("good pair: %v", err)
	}
	if pair.Leaf == nil || pair.Leaf.DNSNames[0] != "*.sites.test" {
		t.Fatalf("good pair: leaf %v", pair.Leaf)
	}
	for _, c := range []struct {
		name      string
		cert, key []byte
		paths     []string // instead of cert and key
		wantErr   string
	}{
		{"missing certificate", nil, nil, []string{missing, f[1]}, "read --tls-cert"},
		{"missing key", nil, nil, []string{f[0], missing}, "read --tls-key"},
		{"not PEM", []byte("hello"), goodKey, nil, "--tls-cert"},
		{"another certificate's key", good, otherKey, nil, "private key does not match"},
		{"expired", expired, expiredKey, nil, "expired on"},
		{"not yet valid", early, earlyKey, nil, "not valid before"},
		{"no DNS name", noName, noNameKey, nil, "names no DNS name"},
	} {
		paths := c.paths
		if paths == nil {
			paths = writeFiles(t, c.cert, c.key)
		}
		if _, err := LoadKeyPair(paths[0], paths[1], now); err == nil || !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("%s: error %v, want one about %q", c.name, err, c.wantErr)
		}
	}
}

// TestBroughtCertificate: the names the operator's certificate covers
// get it during the handshake without the on-demand decision (so never
// an order); the others still reach the decision.
func TestBroughtCertificate(t *testing.T) {
	now := time.Now()
	certPEM, keyPEM := selfSigned(t, now.Add(-time.Hour), now.Add(90*24*time.Hour), "*.sites.test", "sites.test")
	f := writeFiles(t, certPEM, keyPEM)
	pair, err := LoadKeyPair(f[0], f[1], now)
	if err != nil {
		t.Fatal(err)
	}
	var asked []string
	m, err := New(Config{
		WebHost:     "web.test",
		SitesDomain: "sites.test",
		Allow: func(_ context.Context, name string) (Class, error) {
			asked = append(asked, name)
			return Owned, nil
		},
		StorageDir:      t.TempDir(),
		Logger:          slog.New(slog.DiscardHandler),
		LogOutput:       io.Discard,
		CA:              "https://127.0.0.1:1/dir", // never reached in this test
		NewCertsPerHour: 0,                         // no new order allowed
		HTTPPort:        80,
		HTTPSPort:       443,
		Certificate:     &pair,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Stop)
	tc := m.TLSConfig()
	c1, c2 := net.Pipe()
	defer c1.Close()
	defer c2.Close()
	for _, name := range []string{"alice-site.sites.test", "NOSUCH.sites.test", "sites.test"} {
		got, err := tc.GetCertificate(&tls.ClientHelloInfo{ServerName: name, Conn: c1})
		if err != nil || !bytes.Equal(got.Certificate[0], pair.Certificate[0]) {
			t.Errorf("%s: not the brought certificate (%v)", name, err)
		}
	}
	if len(asked) != 0 {
		t.Errorf("the on-demand decision was asked for %q, which the brought certificate covers", asked)
	}
	if !m.Cached("alice-site.sites.test") {
		t.Error("Cached(alice-site.sites.test) = false: Obtain would order it")
	}
	// a custom domain it does not cover still takes the on-demand path
	// (refused here by the budget of 0)
	if _, err := tc.GetCertificate(&tls.ClientHelloInfo{ServerName: "shop.custom.test", Conn: c1}); err == nil {
		t.Error("shop.custom.test got a certificate with no order allowed")
	}
	if len(asked) != 1 || asked[0] != "shop.custom.test" {
		t.Errorf("decision asked for %q, want shop.custom.test", asked)
	}
	for name, want := range map[string]bool{
		"*.sites.test": true, "a.sites.test": true, "sites.test": true,
		"a.b.sites.test": false, "web.test": false, "*.web.test": false,
	} {
		if got := covers(pair.Leaf, name); got != want {
			t.Errorf("covers(%q) = %v, want %v", name, got, want)
		}
	}
}

// lockedBuffer is a bytes.Buffer safe for a logger's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestBroughtCertificateReload: a renewed pair written over the files is
// served without a restart, the old certificate leaving the cache; a pair
// that cannot be served is logged and the previous certificate stays.
func TestBroughtCertificateReload(t *testing.T) {
	now := time.Now()
	oldCert, oldKey := selfSigned(t, now.Add(-time.Hour), now.Add(24*time.Hour), "web.test", "*.sites.test")
	newCert, newKey := selfSigned(t, now.Add(-time.Hour), now.Add(90*24*time.Hour), "web.test", "*.sites.test")
	f := writeFiles(t, oldCert, oldKey)
	pair, err := LoadKeyPair(f[0], f[1], now)
	if err != nil {
		t.Fatal(err)
	}
	var logs lockedBuffer
	m, err := New(Config{
		WebHost:     "web.test",
		SitesDomain: "sites.test",
		Allow:       func(context.Context, string) (Class, error) { return Owned, nil },
		StorageDir:  t.TempDir(),
		Logger:      slog.New(slog.NewTextHandler(&logs, nil)),
		LogOutput:   io.Discard,
		CA:          "https://127.0.0.1:1/dir", // never asked: the pair covers the web host
		HTTPPort:    80,
		HTTPSPort:   443,
		Certificate: &pair,
		CertFile:    f[0],
		KeyFile:     f[1],
		ReloadEvery: 10 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); m.Stop() })
	if err := m.Start(ctx); err != nil {
		t.Fatal(err)
	}
	tc := m.TLSConfig()
	c1, c2 := net.Pipe()
	defer c1.Close()
	defer c2.Close()
	served := func() []byte {
		got, err := tc.GetCertificate(&tls.ClientHelloInfo{ServerName: "alice-site.sites.test", Conn: c1})
		if err != nil {
			t.Fatal(err)
		}
		return got.Certificate[0]
	}
	oldDER := pair.Certificate[0]
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !ok(); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not after 10 s; log: %s", what, logs.String())
			}
		}
	}

	// a half-written certificate file: logged, the old one stays
	if err := os.WriteFile(f[0], oldCert[:len(oldCert)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor("the bad pair logged", func() bool { return strings.Contains(logs.String(), "not served") })
	if !bytes.Equal(served(), oldDER) {
		t.Fatal("a bad pair replaced the certificate")
	}

	// the renewed pair
	if err := os.WriteFile(f[1], newKey, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f[0], newCert, 0o600); err != nil {
		t.Fatal(err)
	}
	renewed, _ := LoadKeyPair(f[0], f[1], time.Now())
	waitFor("the renewed certificate served", func() bool { return bytes.Equal(served(), renewed.Certificate[0]) })
	if n := len(m.cache.AllMatchingCertificates("alice-site.sites.test")); n != 1 {
		t.Errorf("%d certificates cached for the name; want the renewed one only", n)
	}
}
