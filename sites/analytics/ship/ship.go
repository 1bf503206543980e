// Package ship carries the replicas' analytics to the primary through the
// object store, since a replica has no database.
//
// A replica counts with an analytics.Aggregator (Options.Ship) and a
// Shipper writes, every interval, what it counted since as one delta
// object per batch of site-days:
//
//	analytics/deltas/<replica-id>/<seq>.json
//
// created with a conditional PUT (If-None-Match: *), so an object is never
// overwritten; a delta holds the counters to add, the top lists (bounded
// as the primary's rows are: TopLimit entries and analytics.Other) and the
// day's new visitor hashes. The primary reads them (Inbox: a bounded
// number per run, the replicas taken in turns), adds each to its rows
// exactly once (sites/analytics/statsdb records the key in the same
// transaction) and deletes it.
//
// Unique visitors count once across the nodes because every node hashes
// a visitor with the same salt: Salts keeps one random 128-bit salt per
// UTC day at analytics/salts/<YYYY-MM-DD>.json, created by whichever node
// needs it first (a conditional PUT: the first writer wins, the others
// read its salt), and the primary deletes it once the day has ended
// (DayGrace later). The salt is never served: a site visitor cannot learn
// or guess it (128 random bits, the key of SipHash, a pseudo-random
// function); only who can read the bucket can.
//
// Nothing here is under sites/ (the published documents and their change
// feed, sites/publish).
package ship

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"sitedrop/sites/analytics"
	"sitedrop/sites/store/s3store"
)

// Objects is the object access shipping needs (an *s3store.Store).
type Objects interface {
	GetObject(ctx context.Context, key string) ([]byte, string, error)
	PutObject(ctx context.Context, key string, data []byte, cond s3store.Condition) (string, error)
	DeleteObject(ctx context.Context, key string) error
	ListObjects(ctx context.Context, prefix string, fn func(s3store.ObjectInfo) error) error
}

// Where the objects live, under the store's prefix.
const (
	Prefix       = "analytics/"
	DeltasPrefix = Prefix + "deltas/"
	SaltsPrefix  = Prefix + "salts/"
)

// Bounds of a delta.
const (
	// TopLimit is how many entries each top list of a delta keeps
	// besides analytics.Other: statsdb.TopLimit, what a row keeps.
	TopLimit = 100
	// MaxDays is the most site-days one delta object holds; a flush with
	// more writes several.
	MaxDays = 32
	// MaxBytes is the largest delta object the primary reads: MaxDays
	// site-days of the worst lists (3 × 101 keys of MaxKeyLen bytes, each
	// written as \u00XX: under 500 KB) and analytics.MaxVisitorHashes
	// hashes (about 350 KB) fit, under 28 MB.
	MaxBytes = 48 << 20
)

// Delta is one delta object: counts to add to the primary's rows.
type Delta struct {
	// Key is the object's key (not in the JSON).
	Key     string `json:"-"`
	Replica string `json:"replica"`
	Seq     int64  `json:"seq"`
	Days    []Day  `json:"days"`
}

// Day is the counts of one site on one UTC day, as analytics.Day.
type Day struct {
	Site          string            `json:"site"`
	Date          string            `json:"date"`
	PageViews     int64             `json:"page_views"`
	BotViews      int64             `json:"bot_views"`
	PreviewViews  int64             `json:"preview_views,omitempty"`
	NotFound      int64             `json:"not_found"`
	Bytes         int64             `json:"bytes"`
	Pages         []analytics.Count `json:"pages,omitempty"`
	Referrers     []analytics.Count `json:"referrers,omitempty"`
	NotFoundPaths []analytics.Count `json:"not_found_paths,omitempty"`
	// Level and Hashes are the day's new visitor hashes, sampled at
	// Level (analytics.Day.Hashes).
	Level  uint8    `json:"level,omitempty"`
	Hashes []uint64 `json:"visitor_hashes,omitempty"`
}

// FromDay is d as shipped: its lists bounded to TopLimit and Other. Its
// Visitors are not shipped: the hashes are, for the primary to count.
func FromDay(d analytics.Day) Day {
	return Day{
		Site: d.Site, Date: d.Date.Format(time.DateOnly),
		PageViews: d.PageViews, PreviewViews: d.PreviewViews, BotViews: d.BotViews, NotFound: d.NotFound, Bytes: d.Bytes,
		Pages:         analytics.TopN(TopLimit, d.Pages),
		Referrers:     analytics.TopN(TopLimit, d.Referrers),
		NotFoundPaths: analytics.TopN(TopLimit, d.NotFoundPaths),
		Level:         d.Level, Hashes: d.Hashes,
	}
}

// Analytics is d as the primary adds it to a row: Visitors zero (the
// hashes count, through MergeVisitors), its date parsed (checked by
// ParseDelta).
func (d Day) Analytics() analytics.Day {
	date, _ := time.Parse(time.DateOnly, d.Date)
	return analytics.Day{
		Site: d.Site, Date: date,
		PageViews: d.PageViews, PreviewViews: d.PreviewViews, BotViews: d.BotViews, NotFound: d.NotFound, Bytes: d.Bytes,
		Pages: d.Pages, Referrers: d.Referrers, NotFoundPaths: d.NotFoundPaths,
	}
}

// DeltaKey is the key of a replica's delta seq: the sequence zero-padded,
// so a replica's deltas list in order.
func DeltaKey(replica string, seq int64) string {
	return fmt.Sprintf("%s%s/%020d.json", DeltasPrefix, replica, seq)
}

// parseDeltaKey reads a DeltaKey; ok false for any other key.
func parseDeltaKey(key string) (replica string, seq int64, ok bool) {
	rest, found := strings.CutPrefix(key, DeltasPrefix)
	if !found {
		return "", 0, false
	}
	replica, name, found := strings.Cut(rest, "/")
	num, found2 := strings.CutSuffix(name, ".json")
	if !found || !found2 || replica == "" {
		return "", 0, false
	}
	seq, err := strconv.ParseInt(num, 10, 64)
	return replica, seq, err == nil && seq > 0
}

// ParseDelta reads a delta object and checks its bounds: at most MaxDays
// days, each a site and a date, counters not negative, lists of at most
// TopLimit+1 keys of at most analytics.MaxKeyLen bytes, at most
// analytics.MaxVisitorHashes hashes.
func ParseDelta(data []byte) (*Delta, error) {
	var d Delta
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("analytics delta: %w", err)
	}
	if len(d.Days) > MaxDays {
		return nil, fmt.Errorf("analytics delta: %d days, at most %d", len(d.Days), MaxDays)
	}
	for _, day := range d.Days {
		if day.Site == "" {
			return nil, fmt.Errorf("analytics delta: a day without a site")
		}
		if _, err := time.Parse(time.DateOnly, day.Date); err != nil {
			return nil, fmt.Errorf("analytics delta: date %q: %w", day.Date, err)
		}
		if day.PageViews < 0 || day.PreviewViews < 0 || day.BotViews < 0 || day.NotFound < 0 || day.Bytes < 0 {
			return nil, fmt.Errorf("analytics delta: a negative count of %s", day.Site)
		}
		for _, l := range [][]analytics.Count{day.Pages, day.Referrers, day.NotFoundPaths} {
			if len(l) > TopLimit+1 {
				return nil, fmt.Errorf("analytics delta: a list of %d entries", len(l))
			}
			for _, c := range l {
				if len(c.Key) > analytics.MaxKeyLen || c.Count < 0 {
					return nil, fmt.Errorf("analytics delta: a list entry out of bounds")
				}
			}
		}
		if len(day.Hashes) > analytics.MaxVisitorHashes || day.Level > 63 {
			return nil, fmt.Errorf("analytics delta: %d visitor hashes at level %d", len(day.Hashes), day.Level)
		}
	}
	return &d, nil
}
