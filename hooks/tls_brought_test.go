package hooks

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
)

// broughtCert writes a self-signed ECDSA P-256 certificate for names,
// valid from notBefore to notAfter, and its key to PEM files, as an
// operator's --tls-cert and --tls-key.
func broughtCert(t *testing.T, notBefore, notAfter time.Time, names ...string) (certFile, keyFile string, cert *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: names[0]},
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
	if cert, err = x509.ParseCertificate(der); err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile, cert
}

// TestHTTPSBroughtCertificate: with --tls-cert and --tls-key, the web
// host and every site host are served the operator's certificate (a
// wildcard for the sites domain plus the web host), with no order at
// start or on demand; a verified custom domain it does not cover still
// gets its certificate on demand from the CA (Pebble).
func TestHTTPSBroughtCertificate(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an ACME CA and a server")
	}
	now := time.Now()
	certFile, keyFile, brought := broughtCert(t, now.Add(-time.Hour), now.Add(90*24*time.Hour), "web.test", "*.sites.test", "sites.test")
	dns := startFakeDNS(t)
	httpPort, httpsPort := freePort(t), freePort(t)
	httpsAddr := loopback(httpsPort)
	acme := startPebble(t, dns.addr, httpPort, httpsPort)
	srv := startServe(t, copyData(t, templates.fixtures(t)), nil, httpsAddr,
		"--https", httpsAddr, "--http", loopback(httpPort),
		"--acme-ca", acme.directory, "--acme-ca-root", acme.serverRoot, "--dns-resolvers", dns.addr,
		"--tls-cert", certFile, "--tls-key", keyFile)
	mine := x509.NewCertPool()
	mine.AddCert(brought)
	for _, name := range []string{"web.test", "alice-site.sites.test", "nosuch.sites.test"} {
		cert, err := handshake(httpsAddr, name, mine)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !cert.Equal(brought) {
			t.Errorf("%s: served %v, not the brought certificate", name, cert.DNSNames)
		}
	}
	client := pinnedClient(httpsAddr, mine)
	if status, _, body := get(t, client, "https://alice-site.sites.test"+portSuffix(httpsPort)+"/"); status != http.StatusOK || !strings.Contains(body, "alice") {
		t.Fatalf("site over https = %d %q", status, body)
	}
	checkSiteHTTP2(t, httpsAddr, "alice-site.sites.test", "web.test"+portSuffix(httpsPort), mine)
	web := "https://web.test" + portSuffix(httpsPort)
	auth := withHeaders(bearer(keyPia), map[string]string{"Content-Type": "application/json"})
	res, body := doHTTP(t, client, http.MethodPost, web+"/deploy", `{"html":"<h1>pia at home</h1>","slug":"pia-home"}`, auth)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("deploy: %d %s", res.StatusCode, body)
	}
	id := jsonField(t, body, "id")
	if res, body = doHTTP(t, client, http.MethodPost, web+"/deploy/"+id+"/domains", `{"domain":"shop.custom.test"}`, auth); res.StatusCode != http.StatusCreated {
		t.Fatalf("add shop.custom.test: %d %s", res.StatusCode, body)
	}
	rec, err := srv.sd.domainSvc.Lookup(id, "shop.custom.test")
	if err != nil {
		t.Fatal(err)
	}
	dns.mu.Lock()
	dns.txt["_sitedrop-challenge.shop.custom.test."] = []string{rec.Token()}
	dns.mu.Unlock()
	if res, body = doHTTP(t, client, http.MethodPost, web+"/deploy/"+id+"/domains/shop.custom.test/verify", "", bearer(keyPia)); res.StatusCode != http.StatusOK || !strings.Contains(body, `"status":"verified"`) {
		t.Fatalf("verify: %d %s", res.StatusCode, body)
	}
	waitForCertificate(t, httpsAddr, "shop.custom.test", acme.roots)
	cert, err := handshake(httpsAddr, "shop.custom.test", acme.roots)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cert.DNSNames, []string{"shop.custom.test"}) {
		t.Errorf("custom domain certificate names = %v, want its own from the CA", cert.DNSNames)
	}
	if got := acme.orders.Load(); got != 1 {
		t.Errorf("orders = %d, want 1 (the custom domain; the web host and the sites are the brought certificate's)", got)
	}
}

// checkSiteHTTP2: an HTTP/2 connection whose TLS server name is the site
// host site is sitedrop's own HTTP/2 server's (serve.H2Server): the site
// answers over HTTP/2, and a request on that connection for another host
// (webHost, as a browser reusing the connection would send) is answered
// 421, where Go's HTTP/2 server would have served the web host on it.
func checkSiteHTTP2(t *testing.T, addr, site, webHost string, roots *x509.CertPool) {
	t.Helper()
	tr := &http2.Transport{
		DialTLSContext: func(ctx context.Context, network, _ string, _ *tls.Config) (net.Conn, error) {
			d := &tls.Dialer{Config: &tls.Config{ServerName: site, RootCAs: roots, NextProtos: []string{"h2"}}}
			return d.DialContext(ctx, network, addr)
		},
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	_, port, _ := net.SplitHostPort(addr)
	res, err := client.Get("https://" + site + ":" + port + "/")
	if err != nil {
		t.Fatalf("site over HTTP/2: %v", err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || res.ProtoMajor != 2 || !strings.Contains(string(body), "alice") {
		t.Fatalf("site over HTTP/2 = %d %s %q", res.StatusCode, res.Proto, body)
	}
	res, err = client.Get("https://" + webHost + "/api/health")
	if err != nil {
		t.Fatalf("web host on a site's HTTP/2 connection: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMisdirectedRequest {
		t.Fatalf("web host on a site's HTTP/2 connection = %d, want 421", res.StatusCode)
	}
}
