package serve

import (
	"context"
	"net/netip"
	"runtime"
	"sync"
	"time"

	"sitedrop/sites/ratelimit"
)

// gateLimiter counts failed password attempts per client address and
// site, and per site, each in a one-minute window from its first failure
// (in memory: each server counts its own). An IPv6 client counts per
// /64, which one client usually holds.
//
// Only failures count. A client is refused past its own failures; past
// the site's, only a client that has failed already in its window is
// refused, so a client with no failure (a visitor arriving during an
// attack) still has its try: no number of addresses can lock a site's
// visitors out, and guesses at one site stay bounded by the site's cap
// plus one a minute for each fresh address. What one site's attempts may
// cost in CPU is bounded by the password checks' slots (passwordChecks:
// a site holds at most its share of them, whatever it is sent).
type gateLimiter struct {
	failures *ratelimit.Limiter // per site and client
	site     *ratelimit.Limiter // per site
}

// defaultGateFailuresPerClient is the failed attempts a client may make
// on a site per minute; defaultGateFailuresPerSite those of all clients
// together past which only clients with no failure may try.
const (
	defaultGateFailuresPerClient = 10
	defaultGateFailuresPerSite   = 100
)

func newGateLimiter(perClient, perSite int) *gateLimiter {
	return &gateLimiter{
		failures: ratelimit.New(perClient, time.Minute),
		site:     ratelimit.New(perSite, time.Minute),
	}
}

// attempt reserves one failure of ip on site at now, before its
// password is checked (so that checks running at once count too), and
// reports whether it is within the limits, with the client's failures
// before it (the password checks serve fewer first). When the password
// turns out right, or is not checked, pass gives the failure back.
func (l *gateLimiter) attempt(site, ip string, now time.Time) (failures int, ok bool, pass func()) {
	key := site + "\x00" + clientPrefix(ip)
	failures = l.failures.Count(key, now)
	siteOK, _ := l.site.AllowN(site, 1, now)
	if !siteOK && failures > 0 {
		return failures, false, nil
	}
	if ok, _ := l.failures.AllowN(key, 1, now); !ok {
		if siteOK {
			l.site.Refund(site, 1)
		}
		return failures, false, nil
	}
	return failures, true, func() {
		l.failures.Refund(key, 1)
		if siteOK {
			l.site.Refund(site, 1)
		}
	}
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
// a core) running at once on this server, and shares them fairly between
// sites: the per-client limits alone would let many clients, or many
// sites, take every core.
//
// At most slots checks run at once, and at most perSite of one site. A
// check waits up to wait for a slot; a slot that comes free goes to the
// waiting site that holds the fewest, then to the one served least
// recently (round robin), and within a site to the client with the fewest
// failures, then the first come. So a site sent any number of attempts
// never holds more than its share: another site's visitor gets the next
// slot that comes free (its site was served less recently than those kept
// busy), and within a site a visitor who has not failed goes before the
// addresses that keep failing.
type passwordChecks struct {
	slots   int
	perSite int
	wait    time.Duration

	mu      sync.Mutex
	running int
	grants  uint64 // slots given so far: the round robin's clock
	seq     uint64 // waiters queued so far: their order of arrival
	sites   map[string]*siteChecks
}

// siteChecks is one site's checks: running, waiting, and when it was last
// given a slot. It is kept while it has either.
type siteChecks struct {
	running   int
	lastGrant uint64
	waiting   []*checkWaiter
}

// checkWaiter is a check waiting for a slot; ready is closed when it is
// given one (granted, under the lock).
type checkWaiter struct {
	failures int
	seq      uint64
	ready    chan struct{}
	granted  bool
}

// defaultCheckWait is how long a password check waits for a slot before
// the visitor is asked to try again.
const defaultCheckWait = 2 * time.Second

// newPasswordChecks allows half the server's cores (at least one) to
// check passwords at once.
func newPasswordChecks() *passwordChecks {
	return newPasswordChecksN(max(1, runtime.GOMAXPROCS(0)/2), defaultCheckWait)
}

// newPasswordChecksN allows slots checks at once, half of them (at least
// one) for one site, each waiting up to wait.
func newPasswordChecksN(slots int, wait time.Duration) *passwordChecks {
	return &passwordChecks{slots: slots, perSite: max(1, slots/2), wait: wait, sites: map[string]*siteChecks{}}
}

// acquire takes a slot for a check of site by a client with failures
// failures in its window, waiting up to c.wait (or ctx's end); release
// gives it back. ok is false when no slot came free.
func (c *passwordChecks) acquire(ctx context.Context, site string, failures int) (release func(), ok bool) {
	c.mu.Lock()
	sc := c.sites[site]
	if sc == nil {
		sc = &siteChecks{}
		c.sites[site] = sc
	}
	if c.running < c.slots && sc.running < c.perSite {
		// Slots are given out as soon as they come free, so a free one
		// here has no waiter it could go to.
		c.take(sc)
		c.mu.Unlock()
		return c.releaser(site), true
	}
	c.seq++
	w := &checkWaiter{failures: failures, seq: c.seq, ready: make(chan struct{})}
	sc.waiting = append(sc.waiting, w)
	c.mu.Unlock()

	t := time.NewTimer(c.wait)
	defer t.Stop()
	select {
	case <-w.ready:
		return c.releaser(site), true
	case <-t.C:
	case <-ctx.Done():
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if w.granted { // given a slot as the wait ended: use it
		return c.releaser(site), true
	}
	for i, o := range sc.waiting {
		if o == w {
			sc.waiting = append(sc.waiting[:i], sc.waiting[i+1:]...)
			break
		}
	}
	c.forget(site, sc)
	return nil, false
}

// take gives sc a slot; c.mu is held.
func (c *passwordChecks) take(sc *siteChecks) {
	c.running++
	c.grants++
	sc.running++
	sc.lastGrant = c.grants
}

// releaser returns the function that gives back site's slot, once.
func (c *passwordChecks) releaser(site string) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.running--
			sc := c.sites[site]
			sc.running--
			c.forget(site, sc)
			c.grant()
		})
	}
}

// forget drops sc once it has no check running or waiting; c.mu is held.
func (c *passwordChecks) forget(site string, sc *siteChecks) {
	if sc.running == 0 && len(sc.waiting) == 0 {
		delete(c.sites, site)
	}
}

// grant gives the free slots to waiters, in the order passwordChecks
// describes; c.mu is held. The waiters are bounded by the connections,
// and scanned only when a check ends.
func (c *passwordChecks) grant() {
	for c.running < c.slots {
		var best *siteChecks
		for _, sc := range c.sites {
			if len(sc.waiting) == 0 || sc.running >= c.perSite {
				continue
			}
			if best == nil || sc.running < best.running || (sc.running == best.running && sc.lastGrant < best.lastGrant) {
				best = sc
			}
		}
		if best == nil {
			return
		}
		i := 0
		for j, w := range best.waiting {
			if b := best.waiting[i]; w.failures < b.failures || (w.failures == b.failures && w.seq < b.seq) {
				i = j
			}
		}
		w := best.waiting[i]
		best.waiting = append(best.waiting[:i], best.waiting[i+1:]...)
		c.take(best)
		w.granted = true
		close(w.ready)
	}
}
