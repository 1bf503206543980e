package domains

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// ParsePublicIPs reads the server's public addresses (--public-ip, see
// Config.PublicIPs), IPv4-mapped ones as IPv4.
func ParsePublicIPs(list []string) ([]netip.Addr, error) {
	var out []netip.Addr
	for _, s := range list {
		a, err := netip.ParseAddr(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("--public-ip %q: not an IP address", s)
		}
		out = append(out, a.Unmap())
	}
	return out, nil
}

// serverAddrsTTL is how long the looked-up addresses of a site host are
// kept: the records an apex domain must point at are shown on every
// listing and page load, and a slow resolver would make each one slow.
const serverAddrsTTL = 5 * time.Minute

// serverAddrsMax bounds the cache (one entry per site host asked about).
const serverAddrsMax = 1024

// addrCache keeps the addresses a site host resolved to, for
// serverAddrsTTL. Only answers are kept: a failed lookup is asked again.
type addrCache struct {
	mu      sync.Mutex
	entries map[string]addrEntry
}

type addrEntry struct {
	addrs []netip.Addr
	at    time.Time
}

// get returns the cached addresses of host, or calls lookup and caches
// what it answers.
func (c *addrCache) get(ctx context.Context, host string, now time.Time, lookup func(context.Context, string) ([]netip.Addr, error)) ([]netip.Addr, error) {
	c.mu.Lock()
	e, ok := c.entries[host]
	c.mu.Unlock()
	if ok && now.Sub(e.at) < serverAddrsTTL {
		return e.addrs, nil
	}
	addrs, err := lookup(ctx, host)
	if err != nil {
		return addrs, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= serverAddrsMax {
		c.entries = make(map[string]addrEntry) // start again rather than grow
	}
	c.entries[host] = addrEntry{addrs: addrs, at: now}
	return addrs, nil
}
