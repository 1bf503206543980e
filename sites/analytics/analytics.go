// Package analytics counts the visits of deployed sites in memory, without
// cookies and without keeping an IP address: per site and UTC day, page
// views, unique visitors, top pages, referrer hosts, 404s (and their paths),
// bytes served, and the page views of bots that say so, counted apart.
//
// The serving path calls Aggregator.Record for every answer; a job calls
// Flush every minute and writes the counts (deltas since the previous
// flush) to the database. A visitor is a 64-bit hash of its IP address,
// user agent and site, keyed with a salt that lives in memory only and is
// replaced at each UTC midnight (Plausible's and GoatCounter's scheme): a
// visitor cannot be followed from one day to the next, and the salt of a
// past day cannot be recovered. The hashes of a site-day are kept in a
// bounded set (see visitorSet) until the day is over.
package analytics

import (
	"hash/maphash"
	"sync"
	"time"
)

// Hit is one answer of the site server.
type Hit struct {
	// Site is the deployment's id.
	Site string
	// Preview tells that the answer came from a preview host (a version's
	// or an alias's): it counts in PreviewViews only, never in the live
	// site's views, visitors, pages, referrers, 404s or bytes.
	Preview bool
	// Host is the request's Host (a port is ignored): referrers from it
	// are the site's own, and dropped.
	Host string
	// Path is the request's (clean) path.
	Path string
	// Status is the answer's status code.
	Status int
	// Bytes is the length of the body sent.
	Bytes int64
	// Page tells that the answer is an HTML page.
	Page bool
	// IP is the client's address (a port is ignored). It is hashed, never
	// kept.
	IP string
	// UserAgent and Referer are the request's headers of those names.
	UserAgent, Referer string
}

// Limits on what one site-day holds in memory between two flushes: past
// them, further distinct values count under Other.
const (
	MaxPages         = 500
	MaxReferrers     = 200
	MaxNotFoundPaths = 100
	// Other is the key under which values past a cap are counted.
	Other = "(other)"
	// MaxKeyLen bounds the bytes of a key (a path, a referrer host):
	// longer ones are cut (see TruncateKey), so that a list of N keys
	// has a size known in advance, whatever paths visitors ask for.
	MaxKeyLen = 256
)

// shards is the number of independently locked parts of the aggregator;
// a site always lands in the same one.
const shards = 32

// Aggregator holds the counts since the last Flush. Its methods are safe
// for concurrent use.
type Aggregator struct {
	seed   maphash.Seed // picks a site's shard; not a secret
	shards [shards]shard
	salt   struct {
		sync.RWMutex
		day  int32        // the UTC day (days since 1970-01-01) the salt is for
		seed maphash.Seed // the visitor salt of that day; never written anywhere
	}
	// now is the clock; tests replace it.
	now func() time.Time
}

type shard struct {
	mu   sync.Mutex
	days map[dayKey]*siteDay
	_    [40]byte // keep shards on separate cache lines
}

type dayKey struct {
	site string
	day  int32
}

// New returns an empty Aggregator.
func New() *Aggregator {
	return newWithClock(time.Now)
}

func newWithClock(now func() time.Time) *Aggregator {
	a := &Aggregator{seed: maphash.MakeSeed(), now: now}
	for i := range a.shards {
		a.shards[i].days = map[dayKey]*siteDay{}
	}
	a.salt.day = dayOf(now())
	a.salt.seed = maphash.MakeSeed()
	return a
}

// dayOf is t's UTC day, in days since 1970-01-01.
func dayOf(t time.Time) int32 {
	return int32(t.Unix() / 86400)
}

// Record counts h. It takes no lock shared by all sites and, for a site-day
// and path seen before, allocates nothing.
func (a *Aggregator) Record(h Hit) {
	if h.Site == "" {
		return
	}
	day := dayOf(a.now())
	page := h.Page && h.Status == 200
	if h.Preview {
		if page && !IsBot(h.UserAgent) {
			a.recordPreview(h.Site, day)
		}
		return
	}
	bot := (page || h.Status == 404) && IsBot(h.UserAgent) // assets and redirects count bytes only
	var visitor uint64
	if page && !bot {
		visitor = a.visitor(day, h)
	}
	var ref string
	if page && !bot {
		ref = ReferrerHost(h.Referer, h.Host)
	}

	s := &a.shards[maphash.String(a.seed, h.Site)%shards]
	s.mu.Lock()
	d := s.days[dayKey{h.Site, day}]
	if d == nil {
		d = newSiteDay()
		s.days[dayKey{h.Site, day}] = d
	}
	d.bytes += h.Bytes
	switch {
	case page && bot:
		d.botViews++
	case page:
		d.pageViews++
		count(d.pages, h.Path, MaxPages)
		if ref != "" {
			count(d.referrers, ref, MaxReferrers)
		}
		d.visitors.add(visitor)
	case h.Status == 404 && !bot:
		d.notFound++
		count(d.notFoundPaths, h.Path, MaxNotFoundPaths)
	}
	s.mu.Unlock()
}

// count adds one to m[k] (cut to MaxKeyLen), or to m[Other] once m holds
// max distinct keys.
func count(m map[string]int64, k string, max int) {
	k = TruncateKey(k)
	if _, ok := m[k]; !ok && len(m) >= max {
		k = Other
	}
	m[k]++
}

// visitor is h's visitor hash for day, with day's salt (rotating it when
// day is past the salt's).
func (a *Aggregator) visitor(day int32, h Hit) uint64 {
	a.salt.RLock()
	seed, ok := a.salt.seed, a.salt.day == day
	a.salt.RUnlock()
	if !ok {
		seed = a.rotate(day)
	}
	var m maphash.Hash
	m.SetSeed(seed)
	m.WriteString(hostOnly(h.IP))
	m.WriteByte(0)
	m.WriteString(h.UserAgent)
	m.WriteByte(0)
	m.WriteString(h.Site)
	return m.Sum64()
}

// rotate replaces the salt with a new random one when day is later than
// the salt's day, and returns the salt for day. The old salt is dropped:
// nothing else holds it. A clock going backwards keeps the current salt.
func (a *Aggregator) rotate(day int32) maphash.Seed {
	a.salt.Lock()
	defer a.salt.Unlock()
	if day > a.salt.day {
		a.salt.day = day
		a.salt.seed = maphash.MakeSeed()
	}
	return a.salt.seed
}

// hostOnly strips a port (and IPv6 brackets) from addr, without
// allocating.
func hostOnly(addr string) string {
	if len(addr) > 0 && addr[0] == '[' {
		for i := 1; i < len(addr); i++ {
			if addr[i] == ']' {
				return addr[1:i]
			}
		}
		return addr
	}
	colon := -1
	for i := 0; i < len(addr); i++ {
		if addr[i] == ':' {
			if colon >= 0 {
				return addr // a bare IPv6 address
			}
			colon = i
		}
	}
	if colon >= 0 {
		return addr[:colon]
	}
	return addr
}

// recordPreview counts a page view of a preview host of site, apart from
// its live views.
func (a *Aggregator) recordPreview(site string, day int32) {
	s := &a.shards[maphash.String(a.seed, site)%shards]
	s.mu.Lock()
	d := s.days[dayKey{site, day}]
	if d == nil {
		d = newSiteDay()
		s.days[dayKey{site, day}] = d
	}
	d.previewViews++
	s.mu.Unlock()
}
