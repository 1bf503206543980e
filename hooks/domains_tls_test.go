package hooks

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

// TestHTTPSCustomDomain: a custom domain verified through the loopback
// DNS server gets its certificate on demand from Pebble and serves its
// site; a pending domain gets none.
func TestHTTPSCustomDomain(t *testing.T) {
	p := startPebbleServe(t, true)
	dns, acme, httpsAddr, httpsPort, httpAddr, client, web := p.dns, p.acme, p.httpsAddr, p.httpsPort, p.httpAddr, p.client, p.web

	// alice-site is alice's; pia (pro) adds to her own new site
	res, body := doHTTP(t, client, http.MethodPost, web+"/deploy", `{"html":"<h1>pia at home</h1>","slug":"pia-home"}`,
		withHeaders(bearer(keyPia), map[string]string{"Content-Type": "application/json"}))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("deploy: %d %s", res.StatusCode, body)
	}
	id := jsonField(t, body, "id")
	claim := func(name string) string {
		res, body := doHTTP(t, client, http.MethodPost, web+"/deploy/"+id+"/domains", `{"domain":"`+name+`"}`,
			withHeaders(bearer(keyPia), map[string]string{"Content-Type": "application/json"}))
		if res.StatusCode != http.StatusCreated || !strings.Contains(body, `"status":"pending"`) {
			t.Fatalf("add %s: %d %s", name, res.StatusCode, body)
		}
		i := strings.Index(body, `"value":"sitedrop-verify-`)
		return strings.SplitN(body[i+len(`"value":"`):], `"`, 2)[0]
	}
	token := claim("shop.custom.test")
	claim("pending.custom.test")
	if _, err := handshake(httpsAddr, "shop.custom.test", acme.roots); err == nil {
		t.Fatal("a certificate for a pending domain")
	}
	dns.mu.Lock()
	dns.txt["_sitedrop-challenge.shop.custom.test."] = []string{token}
	dns.mu.Unlock()
	// the site's host resolves to 127.0.0.1 (fakeDNS), and so does the domain
	res, body = doHTTP(t, client, http.MethodPost, web+"/deploy/"+id+"/domains/shop.custom.test/verify", "", bearer(keyPia))
	if res.StatusCode != http.StatusOK || !strings.Contains(body, `"status":"verified"`) {
		t.Fatalf("verify: %d %s", res.StatusCode, body)
	}
	cert, err := handshake(httpsAddr, "shop.custom.test", acme.roots)
	if err != nil {
		t.Fatalf("verified domain: %v", err)
	}
	if !slices.Equal(cert.DNSNames, []string{"shop.custom.test"}) {
		t.Errorf("certificate names = %v", cert.DNSNames)
	}
	status, _, got := get(t, client, "https://shop.custom.test"+portSuffix(httpsPort)+"/")
	if status != http.StatusOK || !strings.Contains(got, "pia at home") {
		t.Errorf("verified domain over https = %d %q", status, got)
	}
	for _, name := range []string{"pending.custom.test", "unknown.custom.test"} {
		if _, err := handshake(httpsAddr, name, acme.roots); err == nil {
			t.Errorf("handshake for %s succeeded; want it refused", name)
		}
	}
	// plain HTTP sends the verified domain to https
	plain := pinnedClient(httpAddr, nil)
	res, _ = doHTTP(t, plain, http.MethodGet, "http://shop.custom.test/a?b=c", "", nil)
	if want := "https://shop.custom.test" + portSuffix(httpsPort) + "/a?b=c"; res.StatusCode != http.StatusPermanentRedirect || res.Header.Get("Location") != want {
		t.Errorf("plain HTTP = %d to %q, want 308 to %q", res.StatusCode, res.Header.Get("Location"), want)
	}
	// a pending domain is not served yet: over plain HTTP it is an unknown
	// host, as it always was there (it has no certificate for https)
	if res, _ = doHTTP(t, plain, http.MethodGet, "http://pending.custom.test/", "", nil); res.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("plain HTTP for a pending domain = %d, want 421", res.StatusCode)
	}
}
