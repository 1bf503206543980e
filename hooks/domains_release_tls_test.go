package hooks

import (
	"net/http"
	"strings"
	"testing"
)

// TestHTTPSReleasedDomainLosesItsCertificate: a verified custom domain
// gets its certificate from Pebble; once the domain is released (deleted,
// or its deployment deleted), a new handshake for it fails at once,
// without a restart: the certificate is no longer served from memory.
func TestHTTPSReleasedDomainLosesItsCertificate(t *testing.T) {
	p := startPebbleServe(t, true)
	dns, acme, httpsAddr, client, web := p.dns, p.acme, p.httpsAddr, p.client, p.web
	auth := withHeaders(bearer(keyPia), map[string]string{"Content-Type": "application/json"})

	// verified serves a site of pia's at name, with its certificate, and
	// returns the deployment's id.
	verified := func(slug, name string) string {
		t.Helper()
		res, body := doHTTP(t, client, http.MethodPost, web+"/deploy", `{"html":"<h1>`+slug+`</h1>","slug":"`+slug+`"}`, auth)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("deploy %s: %d %s", slug, res.StatusCode, body)
		}
		id := jsonField(t, body, "id")
		res, body = doHTTP(t, client, http.MethodPost, web+"/deploy/"+id+"/domains", `{"domain":"`+name+`"}`, auth)
		if res.StatusCode != http.StatusCreated {
			t.Fatalf("add %s: %d %s", name, res.StatusCode, body)
		}
		i := strings.Index(body, `"value":"sitedrop-verify-`)
		token := strings.SplitN(body[i+len(`"value":"`):], `"`, 2)[0]
		dns.mu.Lock()
		dns.txt["_sitedrop-challenge."+name+"."] = []string{token}
		dns.mu.Unlock()
		res, body = doHTTP(t, client, http.MethodPost, web+"/deploy/"+id+"/domains/"+name+"/verify", "", bearer(keyPia))
		if res.StatusCode != http.StatusOK || !strings.Contains(body, `"status":"verified"`) {
			t.Fatalf("verify %s: %d %s", name, res.StatusCode, body)
		}
		if _, err := handshake(httpsAddr, name, acme.roots); err != nil {
			t.Fatalf("verified domain %s: %v", name, err)
		}
		return id
	}

	shop := verified("pia-shop", "shop.custom.test")
	blog := verified("pia-blog", "blog.custom.test")

	// the domain is deleted
	if res, body := doHTTP(t, client, http.MethodDelete, web+"/deploy/"+shop+"/domains/shop.custom.test", "", bearer(keyPia)); res.StatusCode/100 != 2 {
		t.Fatalf("delete the domain: %d %s", res.StatusCode, body)
	}
	if _, err := handshake(httpsAddr, "shop.custom.test", acme.roots); err == nil {
		t.Error("a handshake for a deleted domain still succeeds")
	}
	// the deployment is deleted, its domains with it
	if res, body := doHTTP(t, client, http.MethodDelete, web+"/deploy/"+blog, "", bearer(keyPia)); res.StatusCode/100 != 2 {
		t.Fatalf("delete the deployment: %d %s", res.StatusCode, body)
	}
	if _, err := handshake(httpsAddr, "blog.custom.test", acme.roots); err == nil {
		t.Error("a handshake for the domain of a deleted deployment still succeeds")
	}
	// other certificates stay
	if _, err := handshake(httpsAddr, "web.test", acme.roots); err != nil {
		t.Errorf("the web host after releases: %v", err)
	}
}
