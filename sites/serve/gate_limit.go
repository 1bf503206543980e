package serve

import (
	"context"
	"net/netip"
	"runtime"
	"time"

	"sitedrop/sites/ratelimit"
)

// gateLimiter counts password attempts per client address and site, and
// per site, each in a one-minute window from its first attempt (in
// memory: each server counts its own). An IPv6 client counts per /64,
// which one client usually holds.
type gateLimiter struct {
	perIP   *ratelimit.Limiter
	perSite *ratelimit.Limiter
}

// Default attempt limits per minute.
const (
	defaultGateAttemptsPerIP   = 10
	defaultGateAttemptsPerSite = 100
)

func newGateLimiter(ipMax, siteMax int) *gateLimiter {
	return &gateLimiter{perIP: ratelimit.New(ipMax, time.Minute), perSite: ratelimit.New(siteMax, time.Minute)}
}

// allow counts an attempt of ip on site at now, and reports whether it is
// within both limits. Refused attempts are not counted.
func (l *gateLimiter) allow(site, ip string, now time.Time) bool {
	key := site + "\x00" + clientPrefix(ip)
	if ok, _ := l.perIP.AllowN(key, 1, now); !ok {
		return false
	}
	if ok, _ := l.perSite.AllowN(site, 1, now); !ok {
		l.perIP.Refund(key, 1)
		return false
	}
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

// passwordChecks bounds the password checks (a slow hash each, ~50 ms of
// a core) running at once on this server, across every site: the
// per-site limits alone would let many sites' attempts together take
// every core. A check waits up to wait for a slot.
type passwordChecks struct {
	slots chan struct{}
	wait  time.Duration
}

// defaultCheckWait is how long a password check waits for a slot before
// the visitor is asked to try again.
const defaultCheckWait = 2 * time.Second

// newPasswordChecks allows half the server's cores (at least one) to
// check passwords at once.
func newPasswordChecks() *passwordChecks {
	return &passwordChecks{slots: make(chan struct{}, max(1, runtime.GOMAXPROCS(0)/2)), wait: defaultCheckWait}
}

// acquire takes a slot, waiting up to c.wait (or ctx's end); release
// gives it back. ok is false when no slot came free.
func (c *passwordChecks) acquire(ctx context.Context) (release func(), ok bool) {
	select {
	case c.slots <- struct{}{}:
		return func() { <-c.slots }, true
	default:
	}
	t := time.NewTimer(c.wait)
	defer t.Stop()
	select {
	case c.slots <- struct{}{}:
		return func() { <-c.slots }, true
	case <-t.C:
	case <-ctx.Done():
	}
	return nil, false
}
