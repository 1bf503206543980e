package hooks

import (
	"net"
	"net/url"
	"strings"

	"github.com/pocketbase/pocketbase/core"
)

// learnListenPort remembers the port of the serving address, which derived
// URLs carry (http://<slug>.localhost:8090/). Under test harnesses there is
// no server and URLs have no port.
func (sd *sitedrop) learnListenPort(se *core.ServeEvent) {
	if se.Server == nil {
		return
	}
	if _, port, err := net.SplitHostPort(se.Server.Addr); err == nil {
		sd.cfg.listenPort = port
		if port == "443" || port == "https" {
			// PocketBase's --https: TLS on the standard port
			sd.cfg.listenScheme, sd.cfg.listenPort = "https", ""
		}
	}
}

// scheme is the scheme of derived URLs.
func (sd *sitedrop) scheme() string {
	if sd.cfg.listenScheme != "" {
		return sd.cfg.listenScheme
	}
	return "http"
}

// webURL is the base URL of the web host, without a trailing slash.
func (sd *sitedrop) webURL() string {
	if sd.cfg.PublicURL != "" {
		return strings.TrimSuffix(sd.cfg.PublicURL, "/")
	}
	return sd.scheme() + "://" + hostPort(sd.cfg.Domain, sd.scheme(), sd.cfg.listenPort)
}

// siteURL is the live URL of a slug, with a trailing slash.
func (sd *sitedrop) siteURL(slug string) string {
	scheme, port := sd.scheme(), sd.cfg.listenPort
	if sd.cfg.PublicURL != "" {
		if u, err := url.Parse(sd.cfg.PublicURL); err == nil && u.Scheme != "" {
			scheme, port = u.Scheme, u.Port()
		}
	}
	return scheme + "://" + hostPort(slug+"."+sd.cfg.SitesDomain, scheme, port) + "/"
}

// claimURL is where the claim page of an anonymous deployment is.
func (sd *sitedrop) claimURL(slug, token string) string {
	return sd.webURL() + "/claim/" + url.PathEscape(slug) + "?token=" + url.QueryEscape(token)
}

// hostPort joins host and port, leaving out the scheme's default port.
func hostPort(host, scheme, port string) string {
	if port == "" || (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		return host
	}
	return net.JoinHostPort(host, port)
}
