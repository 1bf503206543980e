package analytics

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// clock is a settable time for the aggregator.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

const browser = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/130.0 Safari/537.36"

func page(site, path, ip string) Hit {
	return Hit{Site: site, Host: "demo.sites.test", Path: path, Status: 200, Bytes: 100, Page: true, IP: ip, UserAgent: browser}
}

func TestRecordCounts(t *testing.T) {
	day := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
	scenarios := []struct {
		name string
		hits []Hit
		want Day
	}{
		{
			name: "page views and visitors",
			hits: []Hit{page("s1", "/", "10.0.0.1:5000"), page("s1", "/", "10.0.0.1:6000"), page("s1", "/a", "10.0.0.2:1")},
			want: Day{PageViews: 3, Visitors: 2, Bytes: 300, Pages: []Count{{"/", 2}, {"/a", 1}}},
		},
		{
			name: "a different user agent is a different visitor",
			hits: []Hit{page("s1", "/", "10.0.0.1"), func() Hit { h := page("s1", "/", "10.0.0.1"); h.UserAgent += " Edg/1"; return h }()},
			want: Day{PageViews: 2, Visitors: 2, Bytes: 200, Pages: []Count{{"/", 2}}},
		},
		{
			name: "assets count bytes only",
			hits: []Hit{{Site: "s1", Path: "/app.js", Status: 200, Bytes: 5000, IP: "10.0.0.1", UserAgent: browser}},
			want: Day{Bytes: 5000},
		},
		{
			name: "bots apart",
			hits: []Hit{
				func() Hit {
					h := page("s1", "/", "10.0.0.9")
					h.UserAgent = "Mozilla/5.0 (compatible; Googlebot/2.1)"
					return h
				}(),
				func() Hit { h := page("s1", "/", "10.0.0.9"); h.UserAgent = "curl/8.5.0"; return h }(),
				func() Hit { h := page("s1", "/x", "10.0.0.9"); h.UserAgent = "AhrefsBot"; h.Status = 404; return h }(),
				page("s1", "/", "10.0.0.1"),
			},
			want: Day{PageViews: 1, BotViews: 2, Visitors: 1, Bytes: 400, Pages: []Count{{"/", 1}}},
		},
		{
			name: "404s and their paths",
			hits: []Hit{
				{Site: "s1", Path: "/missing", Status: 404, Bytes: 10, Page: true, IP: "1.1.1.1", UserAgent: browser},
				{Site: "s1", Path: "/missing", Status: 404, Bytes: 10, Page: true, IP: "1.1.1.2", UserAgent: browser},
				{Site: "s1", Path: "/old.png", Status: 404, Bytes: 10, IP: "1.1.1.2", UserAgent: browser},
			},
			want: Day{NotFound: 3, Bytes: 30, NotFoundPaths: []Count{{"/missing", 2}, {"/old.png", 1}}},
		},
		{
			name: "referrer hosts, same-site dropped",
			hits: []Hit{
				func() Hit {
					h := page("s1", "/", "1.1.1.1")
					h.Referer = "https://www.Example.com/search?q=secret"
					return h
				}(),
				func() Hit { h := page("s1", "/", "1.1.1.2"); h.Referer = "http://news.test:8080/a#b"; return h }(),
				func() Hit { h := page("s1", "/b", "1.1.1.1"); h.Referer = "https://demo.sites.test/"; return h }(),
				func() Hit { h := page("s1", "/b", "1.1.1.1"); h.Referer = "android-app://x"; return h }(),
			},
			want: Day{PageViews: 4, Visitors: 2, Bytes: 400, Pages: []Count{{"/", 2}, {"/b", 2}},
				Referrers: []Count{{"example.com", 1}, {"news.test", 1}}},
		},
		{
			name: "redirects and errors count bytes only",
			hits: []Hit{{Site: "s1", Path: "/a.html", Status: 308, IP: "1.1.1.1", UserAgent: browser}, {Site: "s1", Path: "/", Status: 500, Bytes: 15, Page: true}},
			want: Day{Bytes: 15},
		},
	}
	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) {
			a := newWithClock((&clock{day}).now)
			for _, h := range s.hits {
				a.Record(h)
			}
			got := a.Flush()
			if len(got) != 1 {
				t.Fatalf("Flush gave %d days, want 1: %+v", len(got), got)
			}
			s.want.Site, s.want.Date = "s1", time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC)
			if fmt.Sprintf("%+v", got[0]) != fmt.Sprintf("%+v", s.want) {
				t.Errorf("got  %+v\nwant %+v", got[0], s.want)
			}
		})
	}
}

func TestFlushGivesDeltas(t *testing.T) {
	a := newWithClock((&clock{time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)}).now)
	a.Record(page("s1", "/", "1.1.1.1"))
	a.Record(page("s2", "/", "1.1.1.1"))
	if got := a.Flush(); len(got) != 2 || got[0].Site != "s1" || got[1].Site != "s2" || got[0].Visitors != 1 {
		t.Fatalf("first flush: %+v", got)
	}
	if got := a.Flush(); len(got) != 0 {
		t.Fatalf("nothing recorded, yet the flush gave %+v", got)
	}
	a.Record(page("s1", "/", "1.1.1.1")) // the same visitor again: a view, no new visitor
	a.Record(page("s1", "/", "1.1.1.3"))
	got := a.Flush()
	if len(got) != 1 || got[0].PageViews != 2 || got[0].Visitors != 1 {
		t.Fatalf("second flush: %+v", got)
	}
}

func TestVisitorsAcrossSaltRotation(t *testing.T) {
	c := &clock{time.Date(2026, 3, 4, 23, 59, 0, 0, time.UTC)}
	a := newWithClock(c.now)
	a.Record(page("s1", "/", "1.1.1.1"))
	a.Record(page("s1", "/", "1.1.1.1"))
	before := a.salt.salt
	h1 := a.visitor(dayOf(c.t), page("s1", "/", "1.1.1.1"))

	c.t = c.t.Add(2 * time.Minute) // past UTC midnight
	a.Record(page("s1", "/", "1.1.1.1"))
	a.Record(page("s1", "/", "1.1.1.1"))
	if a.salt.salt == before || a.salt.day != dayOf(c.t) {
		t.Fatal("the salt was not rotated at UTC midnight")
	}
	if h2 := a.visitor(dayOf(c.t), page("s1", "/", "1.1.1.1")); h2 == h1 {
		t.Fatal("the same visitor hashes alike on two days")
	}
	got := a.Flush()
	if len(got) != 2 {
		t.Fatalf("want two days, got %+v", got)
	}
	for _, d := range got {
		if d.Visitors != 1 || d.PageViews != 2 {
			t.Errorf("%s: visitors %d, views %d; want 1 and 2", d.Date.Format(time.DateOnly), d.Visitors, d.PageViews)
		}
	}
	// Yesterday's set stays for DayGrace (a replica's late counts of it
	// merge with it), then goes; only today's stays.
	held := func(day int32) bool {
		for i := range a.shards {
			for k := range a.shards[i].days {
				if k.day == day {
					return true
				}
			}
		}
		return false
	}
	if !held(dayOf(c.t) - 1) {
		t.Fatal("yesterday's set was dropped within DayGrace")
	}
	c.t = c.t.Add(DayGrace)
	a.Flush()
	for i := range a.shards {
		for k := range a.shards[i].days {
			if k.day != dayOf(c.t) {
				t.Errorf("a past day (%d) is still held", k.day)
			}
		}
	}
}

func TestCaps(t *testing.T) {
	a := newWithClock((&clock{time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)}).now)
	for i := range MaxPages + 10 {
		a.Record(page("s1", fmt.Sprintf("/p%d", i), "1.1.1.1"))
		a.Record(Hit{Site: "s1", Path: fmt.Sprintf("/n%d", i), Status: 404, UserAgent: browser})
	}
	d := a.Flush()[0]
	if len(d.Pages) != MaxPages+1 || len(d.NotFoundPaths) != MaxNotFoundPaths+1 {
		t.Fatalf("pages %d, 404 paths %d", len(d.Pages), len(d.NotFoundPaths))
	}
	for _, c := range d.Pages {
		if c.Key == Other && c.Count != 10 {
			t.Errorf("%s counts %d, want 10", Other, c.Count)
		}
	}
}

func TestVisitorSetBounded(t *testing.T) {
	v := visitorSet{hashes: map[uint64]struct{}{}}
	const n = 200000
	x := uint64(0x9e3779b97f4a7c15)
	for i := range n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		v.add(x)
		if i%3 == 0 {
			v.add(x) // seen again
		}
	}
	if len(v.hashes) > MaxVisitorHashes {
		t.Fatalf("holds %d hashes", len(v.hashes))
	}
	if e := v.estimate(); e < n*95/100 || e > n*105/100 {
		t.Fatalf("estimate %d for %d", e, n)
	}
}

func TestIsBot(t *testing.T) {
	scenarios := []struct {
		ua   string
		want bool
	}{
		{browser, false},
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Mobile/15E148 Safari/604.1", false},
		{"Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", true},
		{"Baiduspider", true},
		{"Mozilla/5.0 (compatible; YandexCrawler)", true},
		{"Wget/1.21", true},
		{"", true},
	}
	for _, s := range scenarios {
		if got := IsBot(s.ua); got != s.want {
			t.Errorf("IsBot(%q) = %v", s.ua, got)
		}
	}
}

func TestReferrerHost(t *testing.T) {
	scenarios := []struct{ ref, want string }{
		{"https://example.com/a/b?c=d", "example.com"},
		{"HTTPS://User:pw@Example.COM:443/", "example.com"},
		{"https://www.example.com", "example.com"},
		{"http://[2001:db8::1]:8080/x", "2001:db8::1"},
		{"https://demo.sites.test/page", ""},
		{"https://DEMO.sites.test:443/page", ""},
		{"ftp://example.com/", ""},
		{"", ""},
		{"https:///nohost", ""},
	}
	for _, s := range scenarios {
		if got := ReferrerHost(s.ref, "demo.sites.test:8443"); got != s.want {
			t.Errorf("ReferrerHost(%q) = %q, want %q", s.ref, got, s.want)
		}
	}
}

func TestRecordDoesNotAllocate(t *testing.T) {
	a := New()
	h := page("s1", "/", "10.0.0.1:4000")
	h.Referer = "https://example.com/x"
	a.Record(h)
	if n := testing.AllocsPerRun(100, func() { a.Record(h) }); n != 0 {
		t.Fatalf("Record allocates %v times", n)
	}
}

func BenchmarkRecord(b *testing.B) {
	a := New()
	h := page("s1", "/", "10.0.0.1:4000")
	h.Referer = "https://example.com/x"
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			a.Record(h)
		}
	})
}

func TestTopN(t *testing.T) {
	long := strings.Repeat("x", MaxKeyLen+10)
	cut := strings.Repeat("x", MaxKeyLen-len(Ellipsis)) + Ellipsis
	scenarios := []struct {
		name  string
		limit int
		lists [][]Count
		want  []Count
	}{
		{"nothing", 3, nil, nil},
		{"under the limit: merged and sorted", 3,
			[][]Count{{{"/a", 1}, {"/b", 2}}, {{"/a", 2}}},
			[]Count{{"/a", 3}, {"/b", 2}}},
		{"at the limit: no other", 2,
			[][]Count{{{"/a", 1}, {"/b", 2}}},
			[]Count{{"/b", 2}, {"/a", 1}}},
		{"past the limit: the rest counts as other", 2,
			[][]Count{{{"/a", 5}, {"/b", 4}, {"/c", 3}, {"/d", 2}}},
			[]Count{{Other, 5}, {"/a", 5}, {"/b", 4}}}, // ties by key: "(" < "/"
		{"other of the lists added to the rest", 2,
			[][]Count{{{"/a", 5}, {Other, 7}}, {{"/b", 4}, {"/c", 1}, {Other, 2}}},
			[]Count{{Other, 10}, {"/a", 5}, {"/b", 4}}},
		{"other kept under the limit", 3,
			[][]Count{{{"/a", 1}, {Other, 1}}},
			[]Count{{Other, 1}, {"/a", 1}}},
		{"long keys cut, and counted together", 3,
			[][]Count{{{long + "1", 1}, {long + "2", 1}}, {{cut, 1}}},
			[]Count{{cut, 3}}},
		{"ties by key", 1,
			[][]Count{{{"/b", 1}, {"/a", 1}}},
			[]Count{{Other, 1}, {"/a", 1}}},
	}
	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) {
			got := TopN(s.limit, s.lists...)
			if fmt.Sprint(got) != fmt.Sprint(s.want) {
				t.Fatalf("got  %v\nwant %v", got, s.want)
			}
			var in, out int64
			for _, l := range s.lists {
				for _, c := range l {
					in += c.Count
				}
			}
			for _, c := range got {
				out += c.Count
			}
			if in != out {
				t.Fatalf("the counts add up to %d, want %d", out, in)
			}
		})
	}
}

func TestTruncateKey(t *testing.T) {
	base := strings.Repeat("a", MaxKeyLen-len(Ellipsis)-1)
	scenarios := []struct{ name, key, want string }{
		{"short", "/a", "/a"},
		{"exactly the limit", strings.Repeat("a", MaxKeyLen), strings.Repeat("a", MaxKeyLen)},
		{"one byte over", strings.Repeat("a", MaxKeyLen+1), strings.Repeat("a", MaxKeyLen-len(Ellipsis)) + Ellipsis},
		{"not inside a character", base + "é" + strings.Repeat("b", 10), base + Ellipsis},
		{"four-byte character", base[:len(base)-2] + "😀" + strings.Repeat("b", 10), base[:len(base)-2] + Ellipsis},
		{"invalid UTF-8 cut anyway", strings.Repeat("\x80", MaxKeyLen+5), strings.Repeat("\x80", MaxKeyLen-len(Ellipsis)-3) + Ellipsis},
	}
	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) {
			got := TruncateKey(s.key)
			if got != s.want {
				t.Fatalf("TruncateKey(%d bytes) = %q (%d bytes), want %q", len(s.key), got, len(got), s.want)
			}
			if len(got) > MaxKeyLen || TruncateKey(got) != got {
				t.Fatalf("%d bytes, or not idempotent", len(got))
			}
			if utf8.ValidString(s.key) && !utf8.ValidString(got) {
				t.Fatal("cut inside a character")
			}
		})
	}
}

func TestRecordCutsLongPaths(t *testing.T) {
	a := newWithClock((&clock{time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)}).now)
	long := "/" + strings.Repeat("p", 4000)
	a.Record(page("s1", long+"1", "1.1.1.1"))
	a.Record(page("s1", long+"2", "1.1.1.1"))
	a.Record(Hit{Site: "s1", Path: long, Status: 404, UserAgent: browser})
	d := a.Flush()[0]
	want := TruncateKey(long)
	if len(d.Pages) != 1 || d.Pages[0] != (Count{want, 2}) || len(d.NotFoundPaths) != 1 || d.NotFoundPaths[0] != (Count{want, 1}) {
		t.Fatalf("pages %v, 404 paths %v", d.Pages, d.NotFoundPaths)
	}
}

func TestDayAdd(t *testing.T) {
	d := Day{Site: "s1", PageViews: 1, Visitors: 1, Bytes: 10, Pages: []Count{{"/a", 1}}}
	d.Add(Day{Site: "s1", PageViews: 2, BotViews: 1, Visitors: 1, NotFound: 3, Bytes: 5,
		Pages: []Count{{"/a", 1}, {"/b", 1}}, NotFoundPaths: []Count{{"/x", 2}, {"/y", 1}}}, 1)
	want := Day{Site: "s1", PageViews: 3, BotViews: 1, Visitors: 2, NotFound: 3, Bytes: 15,
		Pages: []Count{{"/a", 2}, {Other, 1}}, NotFoundPaths: []Count{{"/x", 2}, {Other, 1}}}
	if fmt.Sprintf("%+v", d) != fmt.Sprintf("%+v", want) {
		t.Fatalf("got  %+v\nwant %+v", d, want)
	}
}
