package hooks

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/certmagic"
)

func TestCheckServeConfig(t *testing.T) {
	for _, c := range []struct {
		name    string
		tune    func(*Config)
		wantErr string
	}{
		{"plain HTTP", func(*Config) {}, ""},
		{"TLS", func(c *Config) { c.Serve.HTTPSAddr = ":443"; c.Serve.HTTPAddr = ":80" }, ""},
		{"TLS without plain HTTP", func(c *Config) { c.Serve.HTTPSAddr = ":443" }, ""},
		{"TLS on localhost", func(c *Config) { c.Serve.HTTPSAddr = ":443"; c.Domain = "localhost" }, "--domain"},
		{"TLS for an IP", func(c *Config) { c.Serve.HTTPSAddr = ":443"; c.SitesDomain = "10.0.0.1" }, "--sites-domain"},
		{"TLS for a bare name", func(c *Config) { c.Serve.HTTPSAddr = ":443"; c.Domain = "intranet" }, "no dot"},
		{"bad HTTPS address", func(c *Config) { c.Serve.HTTPSAddr = "443" }, "--https"},
		{"bad HTTP address", func(c *Config) { c.Serve.HTTPSAddr = ":443"; c.Serve.HTTPAddr = "80" }, "--http"},
		{"unknown DNS provider", func(c *Config) { c.Serve.HTTPSAddr = ":443"; c.Serve.DNSProvider = "nope" }, "unknown --dns-provider"},
		{"cloudflare without token", func(c *Config) {
			t.Setenv("CLOUDFLARE_API_TOKEN", "")
			c.Serve.HTTPSAddr = ":443"
			c.Serve.DNSProvider = "cloudflare"
		}, "CLOUDFLARE_API_TOKEN"},
		{"cloudflare with token", func(c *Config) {
			t.Setenv("CLOUDFLARE_API_TOKEN", "token")
			c.Serve.HTTPSAddr = ":443"
			c.Serve.DNSProvider = "cloudflare"
		}, ""},
		{"ACME flags without TLS", func(c *Config) { c.Serve.ACMEEmail = "ops@example.com" }, "need --https"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := testConfig(t)
			c.tune(cfg)
			err := checkServeConfig(cfg)
			switch {
			case c.wantErr == "" && err != nil:
				t.Errorf("error %v, want none", err)
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Errorf("error %v, want one about %q", err, c.wantErr)
			}
		})
	}
}

func TestRedirectAddrFor(t *testing.T) {
	for in, want := range map[string]string{":443": ":80", "0.0.0.0:443": "0.0.0.0:80", "127.0.0.1:8443": "127.0.0.1:80", "[::1]:443": "[::1]:80"} {
		if got := redirectAddrFor(in); got != want {
			t.Errorf("redirectAddrFor(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestAllowCertificate is the on-demand decision against the fixtures.
func TestAllowCertificate(t *testing.T) {
	_, sd := newFixtureApp(t)
	for name, allowed := range map[string]bool{
		"alice-site.sites.test":   true,
		"anon-site.sites.test":    true,  // anonymous and not expired
		"www.web.test":            true,  // redirected to the web host
		"old-anon.sites.test":     false, // expired
		"nosuch.sites.test":       false,
		"a.alice-site.sites.test": false,
		"sites.test":              false,
		"web.test":                false, // the web config's, never on demand
		"www.sites.test":          false,
		"example.com":             false,
		"":                        false,
	} {
		err := sd.allowCertificate(name)
		if (err == nil) != allowed {
			t.Errorf("allowCertificate(%q) = %v, want allowed %v", name, err, allowed)
		}
	}
}

// TestOnDemandBudget: new on-demand certificates are limited per hour,
// each name charged once; names whose certificate is in storage (loads,
// renewals) are not charged.
func TestOnDemandBudget(t *testing.T) {
	_, sd := newFixtureApp(t)
	mustAnon(t, sd, "secondsite00001", "second-site", "second-token", time.Now().Add(time.Hour))
	mustAnon(t, sd, "thirdsite000001", "third-site", "third-token", time.Now().Add(time.Hour))
	s := DefaultConfig().Serve
	s.ACMECA = "https://127.0.0.1:1/dir" // never asked
	s.NewCertsPerHour = 2
	s.logs = io.Discard
	m, err := newCertManager(sd, s, 80, 443)
	if err != nil {
		t.Fatal(err)
	}
	defer m.stop()
	ctx := context.Background()
	// alice-site's certificate is stored: loading it takes no budget.
	key := certmagic.StorageKeys.SiteCert(m.siteIssuer.IssuerKey(), "alice-site.sites.test")
	if err := m.storage.Store(ctx, key, []byte("stored")); err != nil {
		t.Fatal(err)
	}
	decide := m.sites.OnDemand.DecisionFunc
	for i, c := range []struct {
		name    string
		allowed bool
	}{
		{"anon-site.sites.test", true},
		{"anon-site.sites.test", true}, // a retry is not charged again
		{"second-site.sites.test", true},
		{"third-site.sites.test", false}, // over the budget
		{"ALICE-SITE.sites.test.", true}, // stored
		{"anon-site.sites.test", true},   // already charged this hour
		{"nosuch.sites.test", false},
	} {
		if err := decide(ctx, c.name); (err == nil) != c.allowed {
			t.Errorf("%d: decision for %q = %v, want allowed %v", i, c.name, err, c.allowed)
		}
	}
}

func TestOrderBudget(t *testing.T) {
	t0 := time.Now()
	b := newOrderBudget(2, time.Hour)
	for i, c := range []struct {
		name      string
		at        time.Duration
		ok, first bool
	}{
		{"a", 0, true, false},
		{"b", time.Minute, true, false},
		{"c", 2 * time.Minute, false, true},
		{"d", 3 * time.Minute, false, false}, // refused again, warned once
		{"a", 4 * time.Minute, true, false},
		{"c", 61 * time.Minute, true, false}, // a new window
	} {
		ok, first := b.allow(c.name, t0.Add(c.at))
		if ok != c.ok || first != c.first {
			t.Errorf("%d: allow(%q) = %v, %v; want %v, %v", i, c.name, ok, first, c.ok, c.first)
		}
	}
	if ok, _ := newOrderBudget(0, time.Hour).allow("a", t0); ok {
		t.Error("a budget of 0 allowed an order")
	}
	if ok, _ := newOrderBudget(-1, time.Hour).allow("a", t0); !ok {
		t.Error("an unlimited budget refused an order")
	}
}

// TestCertificateDispatch: the web host, however spelled, is served by
// the web config and never reaches the on-demand decision (which would
// refuse it and drop its certificate from the shared cache).
func TestCertificateDispatch(t *testing.T) {
	_, sd := newFixtureApp(t)
	s := DefaultConfig().Serve
	s.ACMECA = "https://127.0.0.1:1/dir"
	s.logs = io.Discard
	m, err := newCertManager(sd, s, 80, 443)
	if err != nil {
		t.Fatal(err)
	}
	defer m.stop()
	var asked []string
	decide := m.sites.OnDemand.DecisionFunc
	m.sites.OnDemand.DecisionFunc = func(ctx context.Context, name string) error {
		asked = append(asked, name)
		return decide(ctx, name)
	}
	tc := m.tlsConfig()
	c1, c2 := net.Pipe()
	defer c1.Close()
	defer c2.Close()
	for _, name := range []string{"web.test", "WEB.test", " web.test", "web.test\t"} {
		_, _ = tc.GetCertificate(&tls.ClientHelloInfo{ServerName: name, Conn: c1})
	}
	if len(asked) != 0 {
		t.Fatalf("the on-demand decision was asked for %q", asked)
	}
	_, _ = tc.GetCertificate(&tls.ClientHelloInfo{ServerName: "nosuch.sites.test", Conn: c1})
	if len(asked) != 1 {
		t.Fatalf("a site name did not reach the on-demand decision: %q", asked)
	}
}

func TestHTTPRedirectHandler(t *testing.T) {
	_, sd := newFixtureApp(t)
	sd.cfg.listenPort = "443"
	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("app")) })
	challenges := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.URL.Path, "/.well-known/acme-challenge/") {
				w.Write([]byte("key authorization"))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	h := sd.httpRedirectHandler(app, challenges)
	for _, c := range []struct {
		method, host, target string
		status               int
		location, body       string
	}{
		{"GET", "alice-site.sites.test", "/a?b=c", 308, "https://alice-site.sites.test/a?b=c", ""},
		{"POST", "web.test:80", "/deploy", 308, "https://web.test/deploy", ""},
		{"GET", "WWW.web.test", "/", 308, "https://web.test/", ""},
		{"GET", "nosuch.sites.test", "/", 308, "https://nosuch.sites.test/", ""},
		{"GET", "a.b.sites.test", "/", 404, "", "Unknown host\n"},
		{"GET", "alice-site.sites.test:1:2", "/", 400, "", "Invalid Host header\n"},
		{"GET", "alice-site.sites.test.", "/api/health", 400, "", "Invalid Host header\n"},
		{"GET", "[web.test]", "/", 400, "", "Invalid Host header\n"},
		{"GET", "nosuch.sites.test", "/api/health", 308, "https://nosuch.sites.test/api/health", ""},
		{"GET", "alice-site.sites.test", "/api/health", 308, "https://alice-site.sites.test/api/health", ""},
		{"GET", "alice-site.sites.test", "/.well-known/acme-challenge/tok", 200, "", "key authorization"},
		{"GET", "127.0.0.1", "/api/health", 200, "", "app"},
		{"HEAD", "web.test", "/api/health", 200, "", ""},
		{"POST", "web.test", "/api/health", 308, "https://web.test/api/health", ""},
		{"GET", "evil.example", "/", 404, "", "Unknown host\n"},
		{"GET", "evil.example", "/api/health", 200, "", "app"}, // probes send any host
		{"HEAD", "sitedrop-web-1:80", "/api/health", 200, "", ""},
		{"GET", "", "/api/health", 200, "", "app"}, // HTTP/1.0 without Host
		{"GET", "10.0.0.1:80", "/api/health", 200, "", "app"},
		{"GET", "[::1]:80", "/api/health", 200, "", "app"},
		{"GET", "evil.example", "//evil.example/x", 404, "", "Unknown host\n"},
	} {
		req := httptest.NewRequest(c.method, "http://placeholder"+c.target, nil)
		req.Host = c.host
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != c.status || rec.Header().Get("Location") != c.location || (c.body != "" && rec.Body.String() != c.body) {
			t.Errorf("%s %s%s = %d %q %q, want %d %q %q", c.method, c.host, c.target,
				rec.Code, rec.Header().Get("Location"), rec.Body.String(), c.status, c.location, c.body)
		}
	}
	// On another port, or behind an https public URL, the port follows.
	sd.cfg.listenPort = "8443"
	req := httptest.NewRequest("GET", "http://web.test/x", nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if got := rec.Header().Get("Location"); got != "https://web.test:8443/x" {
		t.Errorf("Location = %q on port 8443", got)
	}
	sd.cfg.PublicURL = "https://web.test:9443"
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "http://web.test/x", nil))
	if got := rec.Header().Get("Location"); got != "https://web.test:9443/x" {
		t.Errorf("Location = %q behind the public URL https://web.test:9443", got)
	}
}

func TestHealthCommand(t *testing.T) {
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/health" {
			http.NotFound(w, r)
		}
	}))
	defer ok.Close()
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer down.Close()
	for _, c := range []struct {
		name string
		urls []string
		pass bool
	}{
		{"healthy", []string{ok.URL + "/api/health"}, true},
		{"second URL healthy", []string{down.URL + "/api/health", ok.URL + "/api/health"}, true},
		{"unhealthy", []string{down.URL + "/api/health"}, false},
		{"nothing listens", []string{"http://127.0.0.1:1/api/health"}, false},
		{"not found", []string{ok.URL + "/nope"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := NewHealthCommand()
			var out bytes.Buffer
			cmd.SetOut(&out)
			cmd.SetErr(&out)
			cmd.SetArgs([]string{"--url", strings.Join(c.urls, ","), "--timeout", (2 * time.Second).String()})
			err := cmd.Execute()
			if (err == nil) != c.pass {
				t.Errorf("health %v: err %v, want pass %v (%s)", c.urls, err, c.pass, out.String())
			}
		})
	}
}
