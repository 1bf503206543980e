package hooks

import (
	"fmt"

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

// tls builds what --https needs (see server.TLS) from finished services:
// call it in OnServe, once the listen address is learned
// (learnListenPort), so the https port is known.
func (sd *sitedrop) tls() *server.TLS {
	return &server.TLS{
		Config:            sd.cfg.Serve,
		Hosts:             sd.hosts,
		Live:              sd.server.Live,
		SiteClass:         sd.siteClass,
		DomainCertificate: sd.allowDomainCertificate,
		RedirectDomain: func(hostport string) (string, bool) {
			host, _ := splitHostPortLoose(hostport)
			return host, sd.allowDomainCertificate(host) == nil
		},
		HTTPSPort:  sd.httpsPort(),
		StorageDir: server.CertStorageDir(sd.app),
		Logger:     sd.app.Logger(),
	}
}

// siteClass is the certificate class of a live site: anonymous when the
// deployment has no owner.
func (sd *sitedrop) siteClass(slug string) (certs.Class, error) {
	dep, err := sites.FindDeploymentBySlug(sd.app, slug)
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
func (sd *sitedrop) httpsPort() string {
	if port, ok := publicHTTPSPort(sd.cfg.PublicURL); ok {
		return port
	}
	return sd.cfg.listenPort
}
