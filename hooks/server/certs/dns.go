package certs

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/caddyserver/certmagic"
	"github.com/libdns/cloudflare"
)

// DNSProviderFactory builds a DNS provider for DNS-01 challenges, reading
// its credentials from the environment.
type DNSProviderFactory func() (certmagic.DNSProvider, error)

var (
	dnsProvidersMu sync.RWMutex
	dnsProviders   = map[string]DNSProviderFactory{
		"cloudflare": newCloudflareProvider,
	}
)

// RegisterDNSProvider makes a DNS provider available to --dns-provider
// under name. A self-hoster whose DNS is elsewhere registers any libdns
// provider (github.com/libdns/...) from their own main package.
func RegisterDNSProvider(name string, factory DNSProviderFactory) {
	dnsProvidersMu.Lock()
	defer dnsProvidersMu.Unlock()
	dnsProviders[name] = factory
}

// UnregisterDNSProvider removes the provider registered under name
// (tests use it to undo their registrations).
func UnregisterDNSProvider(name string) {
	dnsProvidersMu.Lock()
	defer dnsProvidersMu.Unlock()
	delete(dnsProviders, name)
}

// dnsProviderNames lists the registered providers, sorted.
func dnsProviderNames() []string {
	dnsProvidersMu.RLock()
	defer dnsProvidersMu.RUnlock()
	names := make([]string, 0, len(dnsProviders))
	for name := range dnsProviders {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// NewDNSProvider builds the provider registered under name (the value of
// --dns-provider), reading its credentials.
func NewDNSProvider(name string) (certmagic.DNSProvider, error) {
	dnsProvidersMu.RLock()
	factory, ok := dnsProviders[name]
	dnsProvidersMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("unknown --dns-provider %q (known: %s)", name, strings.Join(dnsProviderNames(), ", "))
	}
	p, err := factory()
	if err != nil {
		return nil, fmt.Errorf("--dns-provider %s: %w", name, err)
	}
	return p, nil
}

// newCloudflareProvider reads Cloudflare credentials: CLOUDFLARE_API_TOKEN
// (a scoped API token with Zone.DNS:Edit on the zone) and optionally
// CLOUDFLARE_ZONE_TOKEN (Zone:Read on all zones, when the API token is
// scoped to one zone).
func newCloudflareProvider() (certmagic.DNSProvider, error) {
	token := strings.TrimSpace(os.Getenv("CLOUDFLARE_API_TOKEN"))
	if token == "" {
		return nil, errors.New("set CLOUDFLARE_API_TOKEN to an API token with Zone.DNS:Edit permission")
	}
	return &cloudflare.Provider{
		APIToken:  token,
		ZoneToken: strings.TrimSpace(os.Getenv("CLOUDFLARE_ZONE_TOKEN")),
	}, nil
}
