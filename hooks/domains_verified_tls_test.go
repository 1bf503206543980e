package hooks

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"sitedrop/sites/domains"
)

// TestHTTPSCertificateAtVerification: a custom domain verified through
// the service, by "check now" or by the job, has its certificate ordered
// from Pebble at once, in the background: it is in the certificate
// manager's cache before any TLS handshake names it, and its first
// handshake needs no order.
func TestHTTPSCertificateAtVerification(t *testing.T) {
	p := startPebbleServe(t, true)
	dns, acme, srv, httpsAddr, httpsPort, client, web := p.dns, p.acme, p.srv, p.httpsAddr, p.httpsPort, p.client, p.web
	auth := withHeaders(bearer(keyPia), map[string]string{"Content-Type": "application/json"})
	certs := srv.sd.tlsCerts.Load()
	if certs == nil {
		t.Fatal("no certificate manager with --https")
	}

	res, body := doHTTP(t, client, http.MethodPost, web+"/deploy", `{"html":"<h1>pia at home</h1>","slug":"pia-home"}`, auth)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("deploy: %d %s", res.StatusCode, body)
	}
	id := jsonField(t, body, "id")
	// claim adds name (pending: its TXT record is not there yet), then
	// creates the TXT record.
	claim := func(name string) *domains.Domain {
		t.Helper()
		res, body := doHTTP(t, client, http.MethodPost, web+"/deploy/"+id+"/domains", `{"domain":"`+name+`"}`, auth)
		if res.StatusCode != http.StatusCreated || !strings.Contains(body, `"status":"pending"`) {
			t.Fatalf("add %s: %d %s", name, res.StatusCode, body)
		}
		rec, err := srv.sd.domainSvc.Lookup(id, name)
		if err != nil {
			t.Fatal(err)
		}
		dns.mu.Lock()
		dns.txt["_sitedrop-challenge."+name+"."] = []string{rec.Token()}
		dns.mu.Unlock()
		return rec
	}
	shop, blog := claim("shop.custom.test"), claim("blog.custom.test")
	if certs.Cached("shop.custom.test") || certs.Cached("blog.custom.test") {
		t.Fatal("a pending domain has a certificate")
	}

	// shop: "check now", through the service; blog: the job's next run
	if rec, err := srv.sd.domainSvc.Recheck(context.Background(), shop, "pia-home", nil); err != nil || rec.Status() != domains.StatusVerified {
		t.Fatalf("check now: %v %v", rec, err)
	}
	srv.sd.jobs.Run(srv.sd.domainSvc.CheckPending)
	if rec, err := srv.sd.domainSvc.Lookup(id, blog.Name()); err != nil || rec.Status() != domains.StatusVerified {
		t.Fatalf("the job: %v %v", rec, err)
	}
	for _, name := range []string{"shop.custom.test", "blog.custom.test"} {
		deadline := time.Now().Add(60 * time.Second)
		for !certs.Cached(name) {
			if time.Now().After(deadline) {
				t.Fatalf("no certificate for %s in the cache 60s after it was verified", name)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	orders := acme.orders.Load()
	for _, name := range []string{"shop.custom.test", "blog.custom.test"} {
		cert, err := handshake(httpsAddr, name, acme.roots)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !slices.Equal(cert.DNSNames, []string{name}) {
			t.Errorf("%s: certificate names = %v", name, cert.DNSNames)
		}
	}
	if got := acme.orders.Load(); got != orders {
		t.Errorf("the first handshakes made %d orders; want none", got-orders)
	}
	status, _, got := get(t, client, "https://shop.custom.test"+portSuffix(httpsPort)+"/")
	if status != http.StatusOK || !strings.Contains(got, "pia at home") {
		t.Errorf("verified domain over https = %d %q", status, got)
	}
}
