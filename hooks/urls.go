package hooks

import (
	"net"
	"net/http"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
)

// learnListenPort remembers the scheme, host and port of the serving
// address: derived URLs carry the scheme and port
// (http://<slug>.localhost:8090/; https and no port when serving TLS on
// 443), and the host names the web host (see server.Front.IsWebHost). Under test
// harnesses there is no server and URLs have no port.
func (c *Config) learnListenPort(se *core.ServeEvent) {
	if se.Server == nil {
		return
	}
	if c.Serve.HTTPSAddr != "" {
		c.listenScheme = "https"
	}
	if host, port, err := net.SplitHostPort(se.Server.Addr); err == nil {
		c.listenHost = sites.NormHost(host)
		switch port {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
		c.listenPort = port
	}
}

// links are the addresses sitedrop gives out, as the configuration and
// the listen address (learnListenPort) make them. The bindings built at
// serve time are handed one value, built once the address is known.
func (c *Config) links() sites.Links {
	return sites.Links{
		PublicURL:   c.PublicURL,
		Domain:      c.Domain,
		SitesDomain: c.SitesDomain,
		Scheme:      c.listenScheme,
		Port:        c.listenPort,
	}
}

// siteOverTLS reports whether a site request came over TLS
// (sites.Links.OverTLS).
func (c *Config) siteOverTLS(r *http.Request) bool { return c.links().OverTLS(r) }
