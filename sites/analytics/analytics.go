// Package analytics counts the visits of deployed sites in memory, without
// cookies and without keeping an IP address: per site and UTC day, page
// views, unique visitors, top pages, referrer hosts, 404s (and their paths),
// bytes served, and the page views of bots that say so, counted apart.
//
// The serving path calls Aggregator.Record for every answer; a job calls
// Flush every minute and writes the counts (deltas since the previous
// flush) to the database. A visitor is a 64-bit hash of its IP address,
// user agent and site, keyed with a salt of the UTC day (Plausible's and
// GoatCounter's scheme): a visitor cannot be followed from one day to the
// next. The salt is random and lives in memory only, unless a SaltSource
// gives every node the same one (replicas: see Options); either way the
// salt of a past day is gone. The hashes of a site-day are kept in a
// bounded set (see visitorSet) until the day is over (and DayGrace
// more, for the replicas' last counts of the day).
//
// Replicas count with an Aggregator too (Options.Ship): their Flush also
// gives each day's new visitor hashes (Day.Hashes), which the primary adds
// to its own sets with MergeVisitors, so that a visitor seen by several
// nodes counts once.
package analytics

import (
	"crypto/rand"
	"encoding/binary"
	"hash/maphash"
	"math/bits"
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
		day  int32 // the UTC day (days since 1970-01-01) the salt is for
		salt Salt  // the local visitor salt of that day; never written anywhere
	}
	opts Options
	// now is the clock; tests replace it.
	now func() time.Time
}

// Salt keys the visitor hashes of one UTC day: SipHash's 128-bit key.
type Salt [16]byte

// SaltSource gives the salt of a UTC day that every node counting the
// same sites uses (the primary and its replicas), so that their visitor
// hashes can be merged. Salt is called on the serving path: it must not
// wait (ok false when the day's salt is not known yet).
type SaltSource interface {
	Salt(day time.Time) (s Salt, ok bool)
}

// Options tune an Aggregator.
type Options struct {
	// Salts, when not nil, gives each day's salt. A day whose salt it does
	// not know yet is hashed with a local random salt (as without Salts):
	// a visitor seen by another node then counts twice.
	Salts SaltSource
	// Ship keeps, for each flush, the site-day's visitor hashes added
	// since the previous one (Day.Hashes and Day.Level): what a replica
	// ships to the primary.
	Ship bool
}

// DayGrace is how long past its end a day's visitor set is kept: the
// replicas' counts of a day that reach the primary within it are merged
// with the day's visitors, not counted again.
const DayGrace = 15 * time.Minute

type shard struct {
	mu   sync.Mutex
	days map[dayKey]*siteDay
	_    [40]byte // keep shards on separate cache lines
}

type dayKey struct {
	site string
	day  int32
}

// New returns an empty Aggregator with a local salt.
func New() *Aggregator {
	return newWithClock(time.Now)
}

// NewWithOptions returns an empty Aggregator tuned by o.
func NewWithOptions(o Options) *Aggregator {
	a := newWithClock(time.Now)
	a.opts = o
	return a
}

func newWithClock(now func() time.Time) *Aggregator {
	a := &Aggregator{seed: maphash.MakeSeed(), now: now}
	for i := range a.shards {
		a.shards[i].days = map[dayKey]*siteDay{}
	}
	a.salt.day = dayOf(now())
	a.salt.salt = randomSalt()
	return a
}

// randomSalt is a new random salt.
func randomSalt() Salt {
	var s Salt
	rand.Read(s[:]) // never fails (crypto/rand)
	return s
}

// dateOf is day's midnight, UTC.
func dateOf(day int32) time.Time {
	return time.Unix(int64(day)*86400, 0).UTC()
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
		d = newSiteDay(a.opts.Ship)
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

// visitor is h's visitor hash for day: SipHash-2-4 of the IP address,
// user agent and site, keyed with day's salt (the shared one when known,
// else the local one, rotated when day is past it). SipHash rather than
// maphash: every node must hash a visitor alike, and a maphash seed
// cannot be shared.
func (a *Aggregator) visitor(day int32, h Hit) uint64 {
	salt, ok := Salt{}, false
	if a.opts.Salts != nil {
		salt, ok = a.opts.Salts.Salt(dateOf(day))
	}
	if !ok {
		a.salt.RLock()
		salt, ok = a.salt.salt, a.salt.day == day
		a.salt.RUnlock()
		if !ok {
			salt = a.rotate(day)
		}
	}
	return VisitorHash(salt, hostOnly(h.IP), h.UserAgent, h.Site)
}

// VisitorHash is the visitor hash of an IP address (without port), user
// agent and site under salt: SipHash-2-4, a keyed pseudo-random function
// (Aumasson and Bernstein, 2012), so that without the salt a hash cannot
// be tied to an address.
func VisitorHash(salt Salt, ip, userAgent, site string) uint64 {
	var buf [512]byte
	b := append(buf[:0], ip...)
	b = append(b, 0)
	b = append(b, userAgent...)
	b = append(b, 0)
	b = append(b, site...)
	return sipHash24(binary.LittleEndian.Uint64(salt[:8]), binary.LittleEndian.Uint64(salt[8:]), b)
}

// sipHash24 is SipHash-2-4 of p under the key (k0, k1).
func sipHash24(k0, k1 uint64, p []byte) uint64 {
	v0 := k0 ^ 0x736f6d6570736575
	v1 := k1 ^ 0x646f72616e646f6d
	v2 := k0 ^ 0x6c7967656e657261
	v3 := k1 ^ 0x7465646279746573
	round := func() {
		v0 += v1
		v1 = bits.RotateLeft64(v1, 13)
		v1 ^= v0
		v0 = bits.RotateLeft64(v0, 32)
		v2 += v3
		v3 = bits.RotateLeft64(v3, 16)
		v3 ^= v2
		v0 += v3
		v3 = bits.RotateLeft64(v3, 21)
		v3 ^= v0
		v2 += v1
		v1 = bits.RotateLeft64(v1, 17)
		v1 ^= v2
		v2 = bits.RotateLeft64(v2, 32)
	}
	last := uint64(len(p)) << 56
	for ; len(p) >= 8; p = p[8:] {
		m := binary.LittleEndian.Uint64(p)
		v3 ^= m
		round()
		round()
		v0 ^= m
	}
	for i := len(p) - 1; i >= 0; i-- {
		last |= uint64(p[i]) << (8 * i)
	}
	v3 ^= last
	round()
	round()
	v0 ^= last
	v2 ^= 0xff
	round()
	round()
	round()
	round()
	return v0 ^ v1 ^ v2 ^ v3
}

// rotate replaces the local salt with a new random one when day is later
// than the salt's day, and returns the salt for day. The old salt is
// dropped: nothing else holds it. A clock going backwards keeps the
// current salt.
func (a *Aggregator) rotate(day int32) Salt {
	a.salt.Lock()
	defer a.salt.Unlock()
	if day > a.salt.day {
		a.salt.day = day
		a.salt.salt = randomSalt()
	}
	return a.salt.salt
}

// MergeVisitors adds the visitor hashes another node counted for site on
// the UTC day of date (Day.Hashes, sampled at Day.Level) to the day's set:
// a hash the set holds already is no new visitor. The next Flush gives
// the new ones in Day.Visitors. It reports false, adding nothing, for a
// day whose set is gone (ended more than DayGrace ago) or not begun.
func (a *Aggregator) MergeVisitors(site string, date time.Time, level uint8, hashes []uint64) bool {
	if site == "" {
		return false
	}
	day, now := dayOf(date), a.now()
	if day > dayOf(now) || expired(day, now) {
		return false
	}
	s := &a.shards[maphash.String(a.seed, site)%shards]
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.days[dayKey{site, day}]
	if d == nil {
		d = newSiteDay(a.opts.Ship)
		s.days[dayKey{site, day}] = d
	}
	d.visitors.raise(level)
	for _, h := range hashes {
		d.visitors.add(h)
	}
	return true
}

// expired reports whether day ended more than DayGrace before now.
func expired(day int32, now time.Time) bool {
	return !now.Before(dateOf(day + 1).Add(DayGrace))
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
		d = newSiteDay(a.opts.Ship)
		s.days[dayKey{site, day}] = d
	}
	d.previewViews++
	s.mu.Unlock()
}
