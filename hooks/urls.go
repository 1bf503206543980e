package hooks

import (
	"net"
	"net/url"
	"strings"

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

// scheme is the scheme of derived URLs.
func (c *Config) scheme() string {
	if c.listenScheme != "" {
		return c.listenScheme
	}
	return "http"
}

// webURL is the base URL of the web host, without a trailing slash.
func (c *Config) webURL() string {
	if c.PublicURL != "" {
		return strings.TrimSuffix(c.PublicURL, "/")
	}
	return c.scheme() + "://" + hostPort(c.Domain, c.scheme(), c.listenPort)
}

// siteURL is the live URL of a slug, with a trailing slash.
func (c *Config) siteURL(slug string) string {
	return c.siteHostURL(slug + "." + c.SitesDomain)
}

// siteHostURL is the URL of a host that serves a site (a slug host, a
// custom domain): the public URL's scheme and port when one is set,
// else the server's own.
func (c *Config) siteHostURL(host string) string {
	scheme, port := c.scheme(), c.listenPort
	if c.PublicURL != "" {
		if u, err := url.Parse(c.PublicURL); err == nil && u.Scheme != "" {
			scheme, port = u.Scheme, u.Port()
		}
	}
	return scheme + "://" + hostPort(host, scheme, port) + "/"
}

// claimURL is where the claim page of an anonymous deployment is.
func (c *Config) claimURL(slug, token string) string {
	return c.webURL() + "/claim/" + url.PathEscape(slug) + "?token=" + url.QueryEscape(token)
}

// hostPort joins host and port, leaving out the scheme's default port.
func hostPort(host, scheme, port string) string {
	if port == "" || (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		return host
	}
	return net.JoinHostPort(host, port)
}

// publicHTTPSPort is the port of an https public URL ("" for the default
// port); ok is false when the public URL is unset or not https.
func publicHTTPSPort(publicURL string) (port string, ok bool) {
	if publicURL == "" {
		return "", false
	}
	u, err := url.Parse(publicURL)
	if err != nil || u.Scheme != "https" {
		return "", false
	}
	if p := u.Port(); p != "443" {
		return p, true
	}
	return "", true
}
