package replica

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"testing"

	"sitedrop/sites/store/s3store/s3test"
)

// TestFeedPropagation, on versitygw: a replica learns what changed from
// the change feed: a change and a deletion reach it with no list of the
// sites; when nothing changes each poll is one conditional GET answered
// 304; a replica behind the feed's ring lists once and catches up; and
// a primary that restarts makes replicas list once.
func TestFeedPropagation(t *testing.T) {
	ctx := context.Background()
	srv := s3test.Start(t)
	bucket := srv.NewBucket(t)
	proxy := startCountingProxy(t, srv.Endpoint)
	ts := newTestSites(openThrough(t, srv, bucket, nil))
	const ring = 4
	pub := ts.publisher(ring)
	for i := range 8 {
		ts.set(t, fmt.Sprint("s", i), fmt.Sprintf("<h1>s%d one</h1>", i))
	}
	if err := pub.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	objs := openThrough(t, srv, bucket, proxy)
	r := New(Config{Objects: objs, Blobs: objs})
	poll := func(what string) map[string]int {
		t.Helper()
		proxy.take()
		if err := r.Poll(ctx); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return proxy.take()
	}
	want := func(host string, code int, body string) {
		t.Helper()
		if c, b := page(r, host); c != code || (body != "" && b != body) {
			t.Fatalf("%s: %d %q, want %d %q", host, c, b, code, body)
		}
	}
	flush := func() {
		t.Helper()
		if err := pub.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}

	if got := poll("first poll"); got["LIST"] != 1 || got["GET feed 200"] != 1 {
		t.Fatalf("first poll: %v, want the feed read and one list", got)
	}
	want("s1.sites.test", http.StatusOK, "<h1>s1 one</h1>")
	want("s2.sites.test", http.StatusOK, "<h1>s2 one</h1>")

	// idle: one conditional GET per poll, answered 304
	for range 5 {
		if got := poll("idle"); !maps.Equal(got, map[string]int{"GET feed 304": 1}) {
			t.Fatalf("an idle poll made %v, want one 304", got)
		}
	}

	// a change and a deletion: the feed, the changed cached document, no list
	ts.set(t, "s1", "<h1>s1 two</h1>")
	ts.set(t, "s2", "")
	pub.Mark("s1", "s2")
	flush()
	if got := poll("after a change"); got["LIST"] != 0 || got["GET feed 200"] != 1 || got["GET site"] > 1 {
		t.Fatalf("a poll after a change made %v, want the feed and the changed document", got)
	}
	want("s1.sites.test", http.StatusOK, "<h1>s1 two</h1>")
	want("s2.sites.test", http.StatusNotFound, "")
	want("s3.sites.test", http.StatusOK, "<h1>s3 one</h1>")
	// a new site, not yet read, is published on this replica too
	ts.set(t, "new", "<h1>new</h1>")
	pub.Mark("new")
	flush()
	if got := poll("after a new site"); got["LIST"] != 0 {
		t.Fatalf("a new site made the replica list: %v", got)
	}
	want("new.sites.test", http.StatusOK, "<h1>new</h1>")
	if got := poll("idle again"); !maps.Equal(got, map[string]int{"GET feed 304": 1}) {
		t.Fatalf("idle after changes: %v", got)
	}

	// far behind: more hosts changed than the ring keeps
	for i := 3; i < 3+ring+1; i++ {
		ts.set(t, fmt.Sprint("s", i), fmt.Sprintf("<h1>s%d three</h1>", i))
		pub.Mark(fmt.Sprint("s", i))
		flush()
	}
	if got := poll("far behind"); got["LIST"] != 1 {
		t.Fatalf("a replica behind the ring: %v, want one list", got)
	}
	for i := 3; i < 3+ring+1; i++ {
		want(fmt.Sprintf("s%d.sites.test", i), http.StatusOK, fmt.Sprintf("<h1>s%d three</h1>", i))
	}
	want("s1.sites.test", http.StatusOK, "<h1>s1 two</h1>")
	if got := poll("caught up"); !maps.Equal(got, map[string]int{"GET feed 304": 1}) {
		t.Fatalf("idle after catching up: %v", got)
	}

	// the primary restarts: its first feed write resets the feed (a change
	// it wrote before a crash may have missed it); replicas list once
	restarted := ts.publisher(ring)
	if err := restarted.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if got := poll("after a restart"); got["LIST"] != 1 {
		t.Fatalf("after the primary restarted: %v, want one list", got)
	}
	if got := poll("idle after the restart"); !maps.Equal(got, map[string]int{"GET feed 304": 1}) {
		t.Fatalf("idle after the restart: %v", got)
	}
}

// TestNoFeedLists: with no change feed in the store (a primary that
// writes none), a replica lists on every poll, as before the feed.
func TestNoFeedLists(t *testing.T) {
	ctx := context.Background()
	srv := s3test.Start(t)
	bucket := srv.NewBucket(t)
	proxy := startCountingProxy(t, srv.Endpoint)
	objs := openThrough(t, srv, bucket, proxy)
	r := New(Config{Objects: objs, Blobs: objs})
	for range 2 {
		proxy.take()
		if err := r.Poll(ctx); err != nil {
			t.Fatal(err)
		}
		if got := proxy.take(); got["LIST"] != 1 || got["GET feed 404"] != 1 {
			t.Fatalf("a poll with no feed: %v", got)
		}
	}
}
