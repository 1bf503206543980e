package hooks

import (
	"fmt"
	"time"

	"sitedrop/hooks/server"
	"sitedrop/hooks/server/certs"
	"sitedrop/sites"
)

// DNSProviderFactory builds a DNS provider for DNS-01 challenges (see
// certs.DNSProviderFactory).
type DNSProviderFactory = certs.DNSProviderFactory

// RegisterDNSProvider makes a DNS provider available to --dns-provider
// under name. A self-hoster whose DNS is elsewhere registers any libdns
// provider (github.com/libdns/...) from their own main package. It is
// certs.RegisterDNSProvider.
func RegisterDNSProvider(name string, factory DNSProviderFactory) {
	certs.RegisterDNSProvider(name, factory)
}

// tls builds what --https needs (see server.TLS): call it in OnServe,
// once the listen address is learned (learnListenPort), so the https
// port is known.
func (h *siteHosts) tls() *server.TLS {
	return &server.TLS{
		Config:            h.cfg.Serve,
		Hosts:             h.hosts,
		Live:              h.server.Live,
		SiteClass:         h.siteClass,
		DomainCertificate: h.domains.AllowCertificate,
		RedirectDomain: func(hostport string) (string, bool) {
			host, _ := server.SplitHostPort(hostport)
			return host, h.domains.AllowCertificate(host) == nil
		},
		HTTPSPort:  httpsPort(h.cfg),
		StorageDir: server.CertStorageDir(h.app),
		Logger:     h.app.Logger(),
		CertEvents: h.metrics.CertificateEvent,
	}
}

// siteClass is the certificate class of a live site (or of the old slug
// of a renamed one, while it redirects): anonymous when the deployment
// has no owner.
func (h *siteHosts) siteClass(slug string) (certs.Class, error) {
	dep, err := sites.FindServedDeployment(h.app, slug, time.Now()) // a renamed site's old slug too
	if err != nil {
		return certs.Owned, fmt.Errorf("no certificate for site %q: %w", slug, err)
	}
	if dep.OwnerID() == "" {
		return certs.Anonymous, nil
	}
	return certs.Owned, nil
}

// httpsPort is the port of https URLs: the public URL's when one is set,
// else the HTTPS listener's ("" when neither names one: 443).
func httpsPort(cfg *Config) string {
	if port, ok := server.PublicHTTPSPort(cfg.PublicURL); ok {
		return port
	}
	return cfg.listenPort
}
