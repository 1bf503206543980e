package publish

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// hostsOf is the feed's changes as "seq:host:etag" strings.
func hostsOf(f *Feed) string {
	var s []string
	for _, c := range f.Changes {
		s = append(s, fmt.Sprintf("%d:%s:%s", c.Seq, c.Host, c.ETag))
	}
	return strings.Join(s, " ")
}

// TestFeedAdd: changes are numbered in order, a host keeps only its
// latest change, a slower writer's older change is left out, and the
// ring keeps max changes, raising Floor past what it drops.
func TestFeedAdd(t *testing.T) {
	ch := func(host, etag string, gen int64) Change { return Change{Host: host, ETag: etag, Generation: gen} }
	for _, tc := range []struct {
		name   string
		max    int
		adds   [][]Change
		want   string
		seq    int64
		floor  int64
		change bool // the last Add changed the feed
	}{
		{"numbered in order", 10, [][]Change{{ch("a", "1", 1), ch("b", "1", 1)}, {ch("c", "1", 1)}},
			"1:a:1 2:b:1 3:c:1", 3, 0, true},
		{"a host keeps its latest", 10, [][]Change{{ch("a", "1", 1), ch("b", "1", 1)}, {ch("a", "2", 2)}},
			"2:b:1 3:a:2", 3, 0, true},
		{"a removal is a change", 10, [][]Change{{ch("a", "1", 1)}, {ch("a", "", 2)}},
			"2:a:", 2, 0, true},
		{"an older generation is left out", 10, [][]Change{{ch("a", "2", 5)}, {ch("a", "1", 4)}},
			"1:a:2", 1, 0, false},
		{"the same change twice is one", 10, [][]Change{{ch("a", "2", 5)}, {ch("a", "2", 5)}},
			"1:a:2", 1, 0, false},
		{"compaction raises the floor", 2, [][]Change{{ch("a", "1", 1), ch("b", "1", 1), ch("c", "1", 1)}, {ch("d", "1", 1)}},
			"3:c:1 4:d:1", 4, 2, true},
		{"a replaced change is no loss", 2, [][]Change{{ch("a", "1", 1), ch("b", "1", 1)}, {ch("a", "2", 2)}},
			"2:b:1 3:a:2", 3, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := NewFeed()
			var changed bool
			for _, a := range tc.adds {
				changed = f.Add(tc.max, a...)
			}
			if got := hostsOf(f); got != tc.want || f.Seq != tc.seq || f.Floor != tc.floor || changed != tc.change {
				t.Fatalf("got %q seq %d floor %d changed %v, want %q seq %d floor %d changed %v",
					got, f.Seq, f.Floor, changed, tc.want, tc.seq, tc.floor, tc.change)
			}
			data, _ := json.Marshal(f)
			if _, err := ParseFeed(data); err != nil {
				t.Fatalf("the feed does not parse back: %v", err)
			}
		})
	}
}

// TestFeedSince: a replica catches up from the feed only with its epoch
// and a seq at or above the floor; otherwise it must list.
func TestFeedSince(t *testing.T) {
	f := NewFeed()
	for i := range 5 {
		f.Add(3, Change{Host: fmt.Sprint("h", i), ETag: "e", Generation: 1})
	} // changes 3, 4, 5; floor 2
	for _, tc := range []struct {
		name  string
		epoch string
		seq   int64
		want  []string
		ok    bool
	}{
		{"up to date", f.Epoch, 5, nil, true},
		{"one behind", f.Epoch, 4, []string{"h4"}, true},
		{"at the floor", f.Epoch, 2, []string{"h2", "h3", "h4"}, true},
		{"behind the floor", f.Epoch, 1, nil, false},
		{"another epoch", "other", 5, nil, false},
		{"ahead of the feed", f.Epoch, 6, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := f.Since(tc.epoch, tc.seq)
			var hosts []string
			for _, c := range got {
				hosts = append(hosts, c.Host)
			}
			if ok != tc.ok || !slices.Equal(hosts, tc.want) {
				t.Fatalf("Since(%s, %d) = %v %v, want %v %v", tc.epoch, tc.seq, hosts, ok, tc.want, tc.ok)
			}
		})
	}
	f.Reset()
	if _, ok := f.Since(f.Epoch, 4); ok || len(f.Changes) != 0 {
		t.Fatal("after a reset a replica behind still catches up from the feed")
	}
	if _, ok := f.Since(f.Epoch, 5); ok {
		t.Fatal("after a reset a replica that was up to date does not list")
	}
	if _, ok := f.Since(f.Epoch, f.Seq); !ok {
		t.Fatal("a replica that listed after the reset cannot catch up from the feed")
	}
}

// TestParseFeedRefuses: a feed whose numbers do not hold together is an
// error (the replica lists), not changes applied.
func TestParseFeedRefuses(t *testing.T) {
	for _, bad := range []string{
		`nope`,
		`{"seq":1,"floor":0,"changes":[]}`,
		`{"epoch":"e","seq":1,"floor":2,"changes":[]}`,
		`{"epoch":"e","seq":3,"floor":1,"changes":[{"seq":1,"host":"a"}]}`,
		`{"epoch":"e","seq":3,"floor":0,"changes":[{"seq":2,"host":"a"},{"seq":2,"host":"b"}]}`,
		`{"epoch":"e","seq":3,"floor":0,"changes":[{"seq":4,"host":"a"}]}`,
	} {
		if _, err := ParseFeed([]byte(bad)); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}
