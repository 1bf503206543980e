package hooks

import (
	"net/http"
	"testing"

	"github.com/pocketbase/pocketbase/core"
)

func TestDerivedURLs(t *testing.T) {
	for _, c := range []struct {
		name, addr, publicURL string
		tls                   bool
		web, site             string
	}{
		{"default", "127.0.0.1:8090", "", false, "http://localhost:8090", "http://blog.localhost:8090/"},
		{"port 80", "0.0.0.0:80", "", false, "http://localhost", "http://blog.localhost/"},
		{"named port", ":http", "", false, "http://localhost", "http://blog.localhost/"},
		{"TLS on 443", "0.0.0.0:443", "", true, "https://localhost", "https://blog.localhost/"},
		{"TLS on a port", ":8443", "", true, "https://localhost:8443", "https://blog.localhost:8443/"},
		{"plain HTTP on 443", "0.0.0.0:443", "", false, "http://localhost:443", "http://blog.localhost:443/"},
		{"behind a proxy", "127.0.0.1:8090", "https://deploy.example.com/", false, "https://deploy.example.com", "https://blog.localhost/"},
		{"proxy on a port", "127.0.0.1:8090", "http://deploy.example.com:8443", false, "http://deploy.example.com:8443", "http://blog.localhost:8443/"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.PublicURL = c.publicURL
			if c.tls {
				cfg.Serve.HTTPSAddr = c.addr
			}
			cfg.withDefaults()
			sd := &built{cfg: &cfg}
			sd.cfg.learnListenPort(&core.ServeEvent{Server: &http.Server{Addr: c.addr}})
			if got := sd.cfg.links().Web(); got != c.web {
				t.Errorf("webURL = %q, want %q", got, c.web)
			}
			if got := sd.cfg.links().Site("blog"); got != c.site {
				t.Errorf("siteURL = %q, want %q", got, c.site)
			}
			if got, want := sd.cfg.links().Claim("blog", "a b"), c.web+"/claim/blog?token=a+b"; got != want {
				t.Errorf("claimURL = %q, want %q", got, want)
			}
		})
	}
}
