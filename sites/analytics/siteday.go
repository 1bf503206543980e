package analytics

import (
	"sort"
	"time"
	"unicode/utf8"
)

// siteDay is what one site counted on one UTC day since the last flush,
// and the day's visitor set (kept until the day is over).
type siteDay struct {
	pageViews, notFound, bytes, botViews int64
	// previewViews are the page views of the site's preview hosts.
	previewViews                    int64
	pages, referrers, notFoundPaths map[string]int64
	visitors                        visitorSet
	// reported is the visitor count already flushed for the day.
	reported int64
}

// newSiteDay returns an empty site-day; ship keeps its new visitor
// hashes for Day.Hashes.
func newSiteDay(ship bool) *siteDay {
	return &siteDay{
		pages:         map[string]int64{},
		referrers:     map[string]int64{},
		notFoundPaths: map[string]int64{},
		visitors:      visitorSet{hashes: map[uint64]struct{}{}, keep: ship},
	}
}

// Day is the counts of one site on one UTC day since the previous Flush:
// each field is to be added to what was stored before.
type Day struct {
	// Site is the deployment's id; Date its UTC day (midnight).
	Site string
	Date time.Time
	// PageViews counts HTML pages answered 200 to other clients than bots;
	// BotViews, those answered to bots that say so.
	PageViews, BotViews int64
	// Visitors is the number of new distinct visitors of the day.
	Visitors int64
	// PreviewViews counts the HTML pages its preview hosts answered 200
	// (bots left out): counted apart, in none of the other fields.
	PreviewViews int64
	// NotFound counts 404 answers (bots left out).
	NotFound int64
	// Bytes is the body bytes of every answer, bots included.
	Bytes int64
	// Pages, Referrers and NotFoundPaths count page views by path, by
	// referrer host, and 404s by path (see the Max* caps and Other).
	Pages, Referrers, NotFoundPaths []Count
	// Hashes are the day's visitor hashes added since the previous Flush,
	// and Level the sampling level of the day's set (see visitorSet): only
	// with Options.Ship, for MergeVisitors on the primary.
	Hashes []uint64
	Level  uint8
}

// Count is one entry of a top list.
type Count struct {
	Key   string `json:"key"`
	Count int64  `json:"count"`
}

// Flush returns the counts recorded since the previous Flush, site by site
// and day by day (sorted), and starts counting from zero. A past day's
// visitor set is dropped with it once the day ended more than DayGrace
// ago: until then a replica's late counts of the day still merge with it.
func (a *Aggregator) Flush() []Day {
	now := a.now()
	var out []Day
	for i := range a.shards {
		s := &a.shards[i]
		s.mu.Lock()
		for k, d := range s.days {
			if day, ok := d.take(k); ok {
				out = append(out, day)
			}
			if expired(k.day, now) {
				delete(s.days, k)
			}
		}
		s.mu.Unlock()
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Site != out[j].Site {
			return out[i].Site < out[j].Site
		}
		return out[i].Date.Before(out[j].Date)
	})
	return out
}

// take returns d's counts and resets them (the visitor set stays); ok is
// false when nothing was counted since the last take.
func (d *siteDay) take(k dayKey) (Day, bool) {
	visitors := max(d.visitors.estimate()-d.reported, 0)
	day := Day{
		Site: k.site, Date: dateOf(k.day),
		PageViews: d.pageViews, BotViews: d.botViews, Visitors: visitors,
		NotFound: d.notFound, Bytes: d.bytes, PreviewViews: d.previewViews,
		Pages: sorted(d.pages), Referrers: sorted(d.referrers), NotFoundPaths: sorted(d.notFoundPaths),
		Hashes: d.visitors.takeFresh(), Level: d.visitors.level,
	}
	d.reported += visitors
	d.pageViews, d.botViews, d.notFound, d.bytes, d.previewViews = 0, 0, 0, 0, 0
	clear(d.pages)
	clear(d.referrers)
	clear(d.notFoundPaths)
	empty := day.PageViews == 0 && day.PreviewViews == 0 && day.BotViews == 0 && day.NotFound == 0 && day.Bytes == 0 && day.Visitors == 0
	return day, !empty
}

// sorted lists m by count, highest first (ties by key).
func sorted(m map[string]int64) []Count {
	if len(m) == 0 {
		return nil
	}
	out := make([]Count, 0, len(m))
	for k, v := range m {
		out = append(out, Count{k, v})
	}
	SortCounts(out)
	return out
}

// SortCounts sorts c by count, highest first, then by key.
func SortCounts(c []Count) {
	sort.Slice(c, func(i, j int) bool {
		if c[i].Count != c[j].Count {
			return c[i].Count > c[j].Count
		}
		return c[i].Key < c[j].Key
	})
}

// Ellipsis ends a key cut by TruncateKey.
const Ellipsis = "\u2026"

// TruncateKey is k when it has at most MaxKeyLen bytes; otherwise its
// start, cut before a UTF-8 sequence (when k is valid UTF-8), followed by
// Ellipsis, MaxKeyLen bytes at most in all. Long keys that start alike
// thus count together. It is idempotent, and allocates only to cut.
func TruncateKey(k string) string {
	if len(k) <= MaxKeyLen {
		return k
	}
	cut := MaxKeyLen - len(Ellipsis)
	for i := 0; i < utf8.UTFMax-1 && cut > 0 && !utf8.RuneStart(k[cut]); i++ {
		cut--
	}
	return k[:cut] + Ellipsis
}

// TopN adds up lists by key (each key cut by TruncateKey) and keeps the
// limit highest counts; the counts of the others are added to the Other
// entry, which is kept besides them. So the result has at most limit+1
// entries of at most MaxKeyLen bytes each, and its counts add up to those
// of lists: bounding loses detail, never a count. Sorted as by
// SortCounts.
func TopN(limit int, lists ...[]Count) []Count {
	m := map[string]int64{}
	for _, l := range lists {
		for _, c := range l {
			m[TruncateKey(c.Key)] += c.Count
		}
	}
	other, hadOther := m[Other]
	delete(m, Other)
	out := sorted(m)
	if len(out) > limit {
		for _, c := range out[limit:] {
			other += c.Count
		}
		out = out[:limit]
		hadOther = true
	}
	if hadOther {
		out = append(out, Count{Other, other})
		SortCounts(out)
	}
	return out
}

// Add adds o, the counts of the same site and day, to d; each of its
// lists stays bounded to limit entries and Other (see TopN).
func (d *Day) Add(o Day, limit int) {
	d.PageViews += o.PageViews
	d.BotViews += o.BotViews
	d.Visitors += o.Visitors
	d.NotFound += o.NotFound
	d.Bytes += o.Bytes
	d.PreviewViews += o.PreviewViews
	d.Pages = TopN(limit, d.Pages, o.Pages)
	d.Referrers = TopN(limit, d.Referrers, o.Referrers)
	d.NotFoundPaths = TopN(limit, d.NotFoundPaths, o.NotFoundPaths)
}

// MergeCounts adds b into a (by key), and keeps the limit highest: what
// a reader is shown. A list to store is bounded by TopN instead, which
// keeps the count of the others.
func MergeCounts(a, b []Count, limit int) []Count {
	m := make(map[string]int64, len(a)+len(b))
	for _, c := range a {
		m[c.Key] += c.Count
	}
	for _, c := range b {
		m[c.Key] += c.Count
	}
	out := sorted(m)
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}
