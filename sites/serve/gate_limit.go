package serve

import (
	"net/netip"
	"sync"
	"time"
)

// gateLimiter counts password attempts in fixed one-minute windows, per
// client address and site, and per site (in memory: each server counts
// its own). An IPv6 client counts per /64, which one client usually holds.
type gateLimiter struct {
	mu      sync.Mutex
	window  int64 // the minute counted, in Unix minutes
	perIP   map[string]int
	perSite map[string]int
	ipMax   int
	siteMax int
}

// Default attempt limits per minute.
const (
	defaultGateAttemptsPerIP   = 10
	defaultGateAttemptsPerSite = 100
)

func newGateLimiter(ipMax, siteMax int) *gateLimiter {
	return &gateLimiter{perIP: map[string]int{}, perSite: map[string]int{}, ipMax: ipMax, siteMax: siteMax}
}

// allow counts an attempt of ip on site at now, and reports whether it is
// within both limits. Refused attempts are not counted.
func (l *gateLimiter) allow(site, ip string, now time.Time) bool {
	key := site + "\x00" + clientPrefix(ip)
	w := now.Unix() / 60
	l.mu.Lock()
	defer l.mu.Unlock()
	if w != l.window {
		l.window = w
		clear(l.perIP)
		clear(l.perSite)
	}
	if l.perSite[site] >= l.siteMax || l.perIP[key] >= l.ipMax {
		return false
	}
	l.perSite[site]++
	l.perIP[key]++
	return true
}

// clientPrefix is what an address is counted as: itself, or its /64 for
// IPv6 (an address that does not parse counts as itself).
func clientPrefix(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		if ap, err := netip.ParseAddrPort(ip); err == nil {
			a = ap.Addr()
		} else {
			return ip
		}
	}
	a = a.Unmap()
	if a.Is4() {
		return a.String()
	}
	p, _ := a.Prefix(64)
	return p.String()
}
