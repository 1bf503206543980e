package analytics

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// fixedSalts gives every day the same salt: what a store shares.
type fixedSalts struct{ s Salt }

func (f fixedSalts) Salt(time.Time) (Salt, bool) { return f.s, true }

// nodes is a primary and a replica (Ship) hashing with one shared salt,
// on c's clock.
func nodes(c *clock) (primary, replica *Aggregator) {
	salts := fixedSalts{Salt{1, 2, 3}}
	primary, replica = newWithClock(c.now), newWithClock(c.now)
	primary.opts = Options{Salts: salts}
	replica.opts = Options{Salts: salts, Ship: true}
	return primary, replica
}

// ship merges what replica counted since its last flush into primary.
func ship(primary, replica *Aggregator) []Day {
	days := replica.Flush()
	for _, d := range days {
		primary.MergeVisitors(d.Site, d.Date, d.Level, d.Hashes)
	}
	return days
}

// TestMergeVisitorsCountsOnce: a visitor seen by the primary and a
// replica counts once; a replica's visitor the primary has not seen
// counts; shipping the same hashes again adds nothing.
func TestMergeVisitorsCountsOnce(t *testing.T) {
	c := &clock{time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)}
	primary, replica := nodes(c)
	primary.Record(page("s1", "/", "1.1.1.1"))
	replica.Record(page("s1", "/", "1.1.1.1"))
	replica.Record(page("s1", "/", "2.2.2.2"))
	days := ship(primary, replica)
	if len(days) != 1 || len(days[0].Hashes) != 2 {
		t.Fatalf("shipped %+v, want the two new hashes", days)
	}
	primary.MergeVisitors("s1", days[0].Date, days[0].Level, days[0].Hashes) // again
	if got := primary.Flush(); len(got) != 1 || got[0].Visitors != 2 || got[0].PageViews != 1 {
		t.Fatalf("primary: %+v, want 2 visitors (its 1 view)", got)
	}
	replica.Record(page("s1", "/", "2.2.2.2"))
	if d := ship(primary, replica); len(d) != 1 || len(d[0].Hashes) != 0 {
		t.Fatalf("a visitor shipped twice: %+v", d)
	}
}

// TestMergeVisitorsSampled: past MaxVisitorHashes the sets sample; the
// union of a primary's and a replica's overlapping visitors is still
// within 2 %.
func TestMergeVisitorsSampled(t *testing.T) {
	c := &clock{time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)}
	primary, replica := nodes(c)
	const each, overlap = 30000, 15000
	for i := range each {
		primary.Record(page("s1", "/", fmt.Sprintf("10.%d.%d.1", i/256, i%256)))
		replica.Record(page("s1", "/", fmt.Sprintf("10.%d.%d.1", (i+each-overlap)/256, (i+each-overlap)%256)))
		if i%5000 == 0 {
			ship(primary, replica)
		}
	}
	ship(primary, replica)
	got := primary.Flush()[0].Visitors
	want := 2*each - overlap
	if e := math.Abs(float64(got-int64(want))) / float64(want); e > 0.02 {
		t.Fatalf("%d visitors, want %d within 2%% (%.1f%%)", got, want, 100*e)
	}
}

// TestMergeVisitorsOfPastDay: a replica's counts of yesterday merge
// within DayGrace of its end, and are refused after.
func TestMergeVisitorsOfPastDay(t *testing.T) {
	c := &clock{time.Date(2026, 3, 4, 23, 59, 0, 0, time.UTC)}
	primary, replica := nodes(c)
	primary.Record(page("s1", "/", "1.1.1.1"))
	replica.Record(page("s1", "/", "1.1.1.1"))
	replica.Record(page("s1", "/", "2.2.2.2"))
	primary.Flush()
	c.t = c.t.Add(5 * time.Minute)
	primary.Flush()
	ship(primary, replica)
	if got := primary.Flush(); len(got) != 1 || got[0].Visitors != 1 || got[0].Date.Day() != 4 {
		t.Fatalf("yesterday's late visitors: %+v, want the one new", got)
	}
	replica.Record(page("s1", "/", "3.3.3.3"))
	days := replica.Flush()
	c.t = c.t.Add(DayGrace)
	if primary.MergeVisitors("s1", time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC), 0, days[0].Hashes) {
		t.Fatal("merged into a day ended more than DayGrace ago")
	}
}

// TestSipHash holds sipHash24 to the reference vectors of the SipHash
// paper (key 00..0f; messages empty and 00..0e).
func TestSipHash(t *testing.T) {
	k0, k1 := uint64(0x0706050403020100), uint64(0x0f0e0d0c0b0a0908)
	msg := []byte{}
	if got := sipHash24(k0, k1, msg); got != 0x726fdb47dd0e0e31 {
		t.Errorf("empty: %x", got)
	}
	for i := range 15 {
		msg = append(msg, byte(i))
	}
	if got := sipHash24(k0, k1, msg); got != 0xa129ca6149be45e5 {
		t.Errorf("00..0e: %x", got)
	}
}
