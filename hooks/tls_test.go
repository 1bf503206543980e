package hooks

import (
	"compress/gzip"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/caddyserver/certmagic"

	"sitedrop/hooks/server"
	"sitedrop/hooks/server/certs"
)

// TestHTTPSOnDemand runs `sitedrop serve --https` against an in-process
// ACME CA that really validates the challenges on sitedrop's listeners,
// then restarts it on the same data dir.
func TestHTTPSOnDemand(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an ACME CA and a server")
	}
	dns := startFakeDNS(t)
	httpPort, httpsPort := freePort(t), freePort(t)
	httpsAddr, httpAddr := loopback(httpsPort), loopback(httpPort)
	// The CA reaches the plain HTTP listener through a counting proxy.
	proxyPort, httpChallenges := countingProxy(t, httpAddr)
	acme := startPebble(t, dns.addr, proxyPort, httpsPort)
	dir := copyData(t, templates.fixtures(t))
	args := []string{
		"--https", httpsAddr, "--http", httpAddr,
		"--acme-ca", acme.directory, "--acme-ca-root", acme.serverRoot,
		"--acme-email", "ops@web.test",
	}
	// TLS-ALPN-01 off, so every order is validated through the plain HTTP
	// listener (TestHTTPSTLSALPN covers the other challenge).
	httpOnly := func(c *Config) { c.Serve.DisableTLSALPN = true }
	srv := startServe(t, dir, httpOnly, httpsAddr, args...)
	client := pinnedClient(httpsAddr, acme.roots)
	// The web host's certificate is obtained at start, in the background.
	waitForCertificate(t, httpsAddr, "web.test", acme.roots)
	site := "https://alice-site.sites.test" + portSuffix(httpsPort)

	// The web host: a certificate from the CA, HSTS.
	status, header, _ := get(t, client, "https://web.test"+portSuffix(httpsPort)+"/api/health")
	if status != http.StatusOK {
		t.Fatalf("web host health = %d", status)
	}
	if got := header.Get("Strict-Transport-Security"); got != server.HSTS {
		t.Errorf("web host HSTS = %q, want %q", got, server.HSTS)
	}

	// A live slug: its own certificate, obtained during the handshake.
	status, header, body := get(t, client, site+"/")
	if status != http.StatusOK || !strings.Contains(body, "alice") {
		t.Fatalf("live site over https = %d %q", status, body)
	}
	if header.Get("Strict-Transport-Security") != "" {
		t.Error("a site answer carries the web host's HSTS")
	}
	aliceCert, err := handshake(httpsAddr, "alice-site.sites.test", acme.roots)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(aliceCert.DNSNames, []string{"alice-site.sites.test"}) {
		t.Errorf("site certificate names = %v", aliceCert.DNSNames)
	}
	webCert, err := handshake(httpsAddr, "web.test", acme.roots)
	if err != nil {
		t.Fatal(err)
	}
	// www.<web host> gets one on demand too, and redirects.
	if status, header, _ := get(t, client, "https://www.web.test"+portSuffix(httpsPort)+"/auth/login?x=1"); status != http.StatusPermanentRedirect ||
		header.Get("Location") != "https://web.test"+portSuffix(httpsPort)+"/auth/login?x=1" {
		t.Errorf("www over https = %d to %q, want 308 to the web host", status, header.Get("Location"))
	}

	// No certificate for names that are not live sites.
	for _, name := range []string{"nosuch.sites.test", "old-anon.sites.test", "a.b.sites.test", "other.test", "sites.test"} {
		if _, err := handshake(httpsAddr, name, acme.roots); err == nil {
			t.Errorf("handshake for %s succeeded; want it refused", name)
		}
	}

	// URLs in API answers are https, with the port when it is not 443.
	// The page is large (40 KB): its answer is corked under TLS.
	var page strings.Builder
	page.WriteString("<h1>new</h1>")
	for i := 0; page.Len() < 40_000; i++ {
		fmt.Fprintf(&page, "<p>line %d of a long page</p>", i*7919%100_003)
	}
	page.WriteString("<p>the end</p>")
	res, body := doHTTP(t, client, http.MethodPost, "https://web.test"+portSuffix(httpsPort)+"/deploy",
		fmt.Sprintf(`{"html":%q}`, page.String()), map[string]string{"Content-Type": "application/json", "Authorization": "Bearer " + keyPia})
	if res.StatusCode != http.StatusOK {
		t.Fatalf("deploy over https = %d %s", res.StatusCode, body)
	}
	slug := jsonField(t, body, "slug")
	if got, want := jsonField(t, body, "url"), "https://"+slug+".sites.test"+portSuffix(httpsPort)+"/"; got != want {
		t.Errorf("url = %q, want %q", got, want)
	}
	// ... and the new site gets its certificate on its first visit.
	for _, enc := range []string{"", "gzip", "br"} { // identity and variants, one connection each
		req, _ := http.NewRequest(http.MethodGet, "https://"+slug+".sites.test"+portSuffix(httpsPort)+"/", nil)
		req.Header.Set("Accept-Encoding", enc)
		if enc == "" {
			req.Header.Set("Accept-Encoding", "identity")
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatalf("new site over https (%q): %v", enc, err)
		}
		got := readDecoded(t, res)
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Encoding") != enc || got != page.String() {
			t.Errorf("new site over https (%q): %d %q, %d bytes", enc, res.StatusCode, res.Header.Get("Content-Encoding"), len(got))
		}
	}

	// Plain HTTP redirects, keeping host, path and query, and answers the
	// health check.
	plain := pinnedClient(httpAddr, nil)
	for _, c := range []struct{ method, url, location string }{
		{"GET", "http://alice-site.sites.test/a/b?c=d", site + "/a/b?c=d"},
		{"POST", "http://web.test/deploy", "https://web.test" + portSuffix(httpsPort) + "/deploy"},
		{"GET", "http://www.web.test/login", "https://web.test" + portSuffix(httpsPort) + "/login"},
	} {
		res, _ := doHTTP(t, plain, c.method, c.url, "", nil)
		if res.StatusCode != http.StatusPermanentRedirect || res.Header.Get("Location") != c.location {
			t.Errorf("%s %s = %d to %q, want 308 to %q", c.method, c.url, res.StatusCode, res.Header.Get("Location"), c.location)
		}
	}
	if status, _, _ := get(t, plain, "http://127.0.0.1/api/health"); status != http.StatusOK {
		t.Errorf("health over plain HTTP = %d", status)
	}
	if status, _, body := get(t, plain, "http://evil.example/"); status != http.StatusMisdirectedRequest || body != `{"error":"unknown host"}`+"\n" {
		t.Errorf("unknown host over plain HTTP = %d %q, want 421 unknown host", status, body)
	}
	// Over TLS too: a Host this server does not serve, on a connection to
	// the web host's name, never gets the web host's pages.
	req, _ := http.NewRequest(http.MethodGet, "https://web.test"+portSuffix(httpsPort)+"/auth/login", nil)
	req.Host = "evil.example"
	if res, err := client.Do(req); err != nil {
		t.Errorf("unknown host over https: %v", err)
	} else {
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusMisdirectedRequest || string(body) != `{"error":"unknown host"}`+"\n" {
			t.Errorf("unknown host over https = %d %q, want 421 unknown host", res.StatusCode, body)
		}
	}

	// A restart reuses the stored certificates: no new order.
	orders := acme.orders.Load()
	if orders < 3 {
		t.Errorf("orders = %d, want at least 3 (web host, alice-site, the new site)", orders)
	}
	if httpChallenges.Load() == 0 {
		t.Error("no HTTP-01 validation reached the plain HTTP listener")
	}
	srv.stop(t)
	startServe(t, dir, httpOnly, httpsAddr, args...)
	for name, before := range map[string]string{"alice-site.sites.test": aliceCert.SerialNumber.String(), "web.test": webCert.SerialNumber.String()} {
		cert, err := handshake(httpsAddr, name, acme.roots)
		if err != nil {
			t.Fatalf("after restart, %s: %v", name, err)
		}
		if cert.SerialNumber.String() != before {
			t.Errorf("after restart, %s has a new certificate", name)
		}
	}
	if got := acme.orders.Load(); got != orders {
		t.Errorf("after restart, %d new orders; want none", got-orders)
	}
}

// TestHTTPSWildcardDNS01 obtains the wildcard certificate through DNS-01
// with a fake libdns provider; the CA checks the TXT records it set.
func TestHTTPSWildcardDNS01(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an ACME CA and a server")
	}
	dns := startFakeDNS(t)
	RegisterDNSProvider("fake-test", func() (certmagic.DNSProvider, error) {
		return &fakeDNSProvider{dns: dns}, nil
	})
	t.Cleanup(func() { certs.UnregisterDNSProvider("fake-test") })
	httpPort, httpsPort := freePort(t), freePort(t)
	acme := startPebble(t, dns.addr, httpPort, httpsPort)
	httpsAddr := loopback(httpsPort)
	startServe(t, copyData(t, templates.fixtures(t)), nil, httpsAddr,
		"--https", httpsAddr, "--http", loopback(httpPort),
		"--acme-ca", acme.directory, "--acme-ca-root", acme.serverRoot,
		"--dns-provider", "fake-test", "--dns-resolvers", dns.addr)
	client := pinnedClient(httpsAddr, acme.roots)
	// The certificates are obtained in the background after the start.
	waitForCertificate(t, httpsAddr, "alice-site.sites.test", acme.roots)
	waitForCertificate(t, httpsAddr, "web.test", acme.roots)

	status, _, body := get(t, client, "https://alice-site.sites.test"+portSuffix(httpsPort)+"/")
	if status != http.StatusOK || !strings.Contains(body, "alice") {
		t.Fatalf("site over https = %d %q", status, body)
	}
	cert, err := handshake(httpsAddr, "alice-site.sites.test", acme.roots)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cert.DNSNames, []string{"*.sites.test"}) {
		t.Errorf("site certificate names = %v, want the wildcard", cert.DNSNames)
	}
	// The wildcard covers any slug: an unknown one gets TLS and a 404.
	if status, _, _ := get(t, client, "https://nosuch.sites.test"+portSuffix(httpsPort)+"/"); status != http.StatusNotFound {
		t.Errorf("unknown slug = %d, want 404", status)
	}
	if status, _, _ := get(t, client, "https://web.test"+portSuffix(httpsPort)+"/api/health"); status != http.StatusOK {
		t.Errorf("web host = %d", status)
	}
	names := dns.txtNames()
	if !slices.Equal(names, []string{"_acme-challenge.sites.test."}) {
		t.Errorf("TXT records set for %v; want one for _acme-challenge.sites.test. only (the web host uses HTTP-01 or TLS-ALPN-01)", names)
	}
	if got := acme.orders.Load(); got != 2 {
		t.Errorf("orders = %d, want 2 (the wildcard and the web host)", got)
	}
}

// waitForCertificate waits until a handshake for name succeeds.
func waitForCertificate(t *testing.T, addr, name string, roots *x509.CertPool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, err := handshake(addr, name, roots)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no certificate for %s: %v", name, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestHTTPSTLSALPN serves TLS without a plain HTTP listener: certificates
// then come through TLS-ALPN-01 on the HTTPS port.
func TestHTTPSTLSALPN(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an ACME CA and a server")
	}
	dns := startFakeDNS(t)
	httpsPort := freePort(t)
	// Nothing serves plain HTTP; the CA would try through this proxy.
	proxyPort, httpChallenges := countingProxy(t, loopback(freePort(t)))
	acme := startPebble(t, dns.addr, proxyPort, httpsPort)
	httpsAddr := loopback(httpsPort)
	startServe(t, copyData(t, templates.fixtures(t)), nil, httpsAddr,
		"--https", httpsAddr, "--http", "",
		"--acme-ca", acme.directory, "--acme-ca-root", acme.serverRoot)
	waitForCertificate(t, httpsAddr, "web.test", acme.roots)
	client := pinnedClient(httpsAddr, acme.roots)
	if status, _, body := get(t, client, "https://alice-site.sites.test"+portSuffix(httpsPort)+"/"); status != http.StatusOK || !strings.Contains(body, "alice") {
		t.Errorf("site over https = %d %q", status, body)
	}
	if httpChallenges.Load() != 0 {
		t.Error("an HTTP-01 validation was attempted with no plain HTTP listener")
	}
}

// readDecoded reads a response body, decoding gzip and br, and closes it.
func readDecoded(t *testing.T, res *http.Response) string {
	t.Helper()
	defer res.Body.Close()
	var r io.Reader = res.Body
	switch res.Header.Get("Content-Encoding") {
	case "gzip":
		zr, err := gzip.NewReader(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	case "br":
		r = brotli.NewReader(res.Body)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
