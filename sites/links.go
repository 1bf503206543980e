package sites

import (
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/pocketbase/pocketbase/core"
)

// ShareTokenParam is the query parameter of a share link.
const ShareTokenParam = "_token"

// Links are the addresses sitedrop gives out: the web host's, a site's, a
// claim page's, a share link's. They are built once the server knows its
// listen address (the scheme and port of derived URLs), and the deploy
// API, the pages, the MCP tools and the publisher read the same value.
type Links struct {
	// PublicURL is the web host's public address when a proxy serves it
	// (--public-url; "" for none): its scheme and port are the sites'
	// too.
	PublicURL string
	// Domain is the web host; SitesDomain the domain sites are under.
	Domain, SitesDomain string
	// Scheme is the listener's ("https" when it serves TLS; "" is http)
	// and Port its port ("" under a test harness: no port in the URLs).
	Scheme, Port string
}

// scheme is the scheme of derived URLs.
func (l Links) scheme() string {
	if l.Scheme != "" {
		return l.Scheme
	}
	return "http"
}

// Web is the base URL of the web host, without a trailing slash.
func (l Links) Web() string {
	if l.PublicURL != "" {
		return strings.TrimSuffix(l.PublicURL, "/")
	}
	return l.scheme() + "://" + HostPort(l.Domain, l.scheme(), l.Port)
}

// Site is the live URL of a slug, with a trailing slash.
func (l Links) Site(slug string) string {
	return l.SiteHost(slug + "." + l.SitesDomain)
}

// SiteHost is the URL of a host that serves a site (a slug host, a
// custom domain): the public URL's scheme and port when one is set, else
// the server's own.
func (l Links) SiteHost(host string) string {
	scheme, port := l.scheme(), l.Port
	if l.PublicURL != "" {
		if u, err := url.Parse(l.PublicURL); err == nil && u.Scheme != "" {
			scheme, port = u.Scheme, u.Port()
		}
	}
	return scheme + "://" + HostPort(host, scheme, port) + "/"
}

// Claim is where the claim page of an anonymous deployment is.
func (l Links) Claim(slug, token string) string {
	return l.Web() + "/claim/" + url.PathEscape(slug) + "?token=" + url.QueryEscape(token)
}

// Share is the share link of a deployment whose link is on, "" for any
// other: the site's URL with the share token.
func (l Links) Share(rec *core.Record) string {
	p := ProtectionOf(rec)
	if p == nil || !p.Link {
		return ""
	}
	return l.Site(DeploymentOf(rec).Slug()) + "?" + ShareTokenParam + "=" + url.QueryEscape(p.ShareToken())
}

// OverTLS reports whether a site request came over TLS: sitedrop's own
// listener, or a proxy in front of it when the public URL is https. A
// protected site's gate cookie is then Secure and __Host-.
func (l Links) OverTLS(r *http.Request) bool {
	return r.TLS != nil || strings.HasPrefix(l.PublicURL, "https:")
}

// HostPort joins host and port, leaving out the scheme's default port.
func HostPort(host, scheme, port string) string {
	if port == "" || (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		return host
	}
	return net.JoinHostPort(host, port)
}
