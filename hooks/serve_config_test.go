package hooks

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"sitedrop/hooks/server/certs"
)

func TestCheckServeConfig(t *testing.T) {
	now := time.Now()
	good, goodKey, _ := broughtCert(t, now.Add(-time.Hour), now.Add(time.Hour), "*.sites.test")
	_, otherKey, _ := broughtCert(t, now.Add(-time.Hour), now.Add(time.Hour), "*.sites.test")
	expired, expiredKey, _ := broughtCert(t, now.Add(-2*time.Hour), now.Add(-time.Hour), "*.sites.test")
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
		{"brought certificate", func(c *Config) { c.Serve.HTTPSAddr = ":443"; c.Serve.TLSCert, c.Serve.TLSKey = good, goodKey }, ""},
		{"brought certificate without TLS", func(c *Config) { c.Serve.TLSCert, c.Serve.TLSKey = good, goodKey }, "need --https"},
		{"certificate without key", func(c *Config) { c.Serve.HTTPSAddr = ":443"; c.Serve.TLSCert = good }, "go together"},
		{"unreadable certificate", func(c *Config) {
			c.Serve.HTTPSAddr = ":443"
			c.Serve.TLSCert, c.Serve.TLSKey = goodKey+".none", goodKey
		}, "read --tls-cert"},
		{"another certificate's key", func(c *Config) { c.Serve.HTTPSAddr = ":443"; c.Serve.TLSCert, c.Serve.TLSKey = good, otherKey }, "does not match"},
		{"expired certificate", func(c *Config) { c.Serve.HTTPSAddr = ":443"; c.Serve.TLSCert, c.Serve.TLSKey = expired, expiredKey }, "expired on"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := testConfig(t)
			c.tune(cfg)
			err := cfg.Serve.Check(ServeSettings(cfg))
			switch {
			case c.wantErr == "" && err != nil:
				t.Errorf("error %v, want none", err)
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Errorf("error %v, want one about %q", err, c.wantErr)
			}
		})
	}
}

// TestAllowCertificate is the on-demand decision against the fixtures,
// with the class each allowed name is charged to.
func TestAllowCertificate(t *testing.T) {
	_, sd := newFixtureApp(t)
	type want struct {
		allowed bool
		class   certs.Class
	}
	for name, w := range map[string]want{
		"alice-site.sites.test":   {true, certs.Owned},
		"anon-site.sites.test":    {true, certs.Anonymous}, // anonymous and not expired
		"www.web.test":            {true, certs.Owned},     // redirected to the web host
		"old-anon.sites.test":     {false, 0},              // expired
		"nosuch.sites.test":       {false, 0},
		"a.alice-site.sites.test": {false, 0},
		"sites.test":              {false, 0},
		"web.test":                {false, 0}, // the web config's, never on demand
		"www.sites.test":          {false, 0},
		"example.com":             {false, 0},
		"":                        {false, 0},
	} {
		class, err := sd.tls().AllowCertificate(name)
		if (err == nil) != w.allowed || (w.allowed && class != w.class) {
			t.Errorf("allowCertificate(%q) = %v, %v; want allowed %v, %v", name, class, err, w.allowed, w.class)
		}
	}
}

// TestHTTPRedirectPort: on another port, or behind an https public URL,
// the plain listener's redirects carry the port (the redirects themselves
// are certs.RedirectHandler's, tested there).
func TestHTTPRedirectPort(t *testing.T) {
	_, sd := newFixtureApp(t)
	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("app")) })
	challenges := func(next http.Handler) http.Handler { return next }
	for _, c := range []struct{ listenPort, publicURL, location string }{
		{"443", "", "https://web.test/x"},
		{"8443", "", "https://web.test:8443/x"},
		{"8443", "https://web.test:9443", "https://web.test:9443/x"},
	} {
		sd.cfg.listenPort, sd.cfg.PublicURL = c.listenPort, c.publicURL
		rec := httptest.NewRecorder()
		sd.tls().RedirectHandler(app, challenges).ServeHTTP(rec, httptest.NewRequest("GET", "http://web.test/x", nil))
		if got := rec.Header().Get("Location"); rec.Code != http.StatusPermanentRedirect || got != c.location {
			t.Errorf("port %s, public URL %q: %d to %q, want 308 to %q", c.listenPort, c.publicURL, rec.Code, got, c.location)
		}
	}
}
