package replica

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"sitedrop/sites/publish"
	"sitedrop/sites/store/s3store/s3test"
)

// TestPushPropagation, on versitygw: a replica given the primary's
// address (serve --replica --primary) learns of a change from its long
// poll. With the store read every minute only while it follows the
// primary (Fallback), a change is served long before a fallback poll
// could have run, and while nothing changes the replica makes no store
// request at all. When the primary goes away the replica polls the store
// every Poll at once, and a change reaches it that way; once the primary
// is back (restarted, on the same address) it follows it again.
func TestPushPropagation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := s3test.Start(t)
	bucket := srv.NewBucket(t)
	ts := newTestSites(openThrough(t, srv, bucket, nil))
	ts.set(t, "a", "<h1>one</h1>")
	changes := publish.NewChanges(publish.ChangesConfig{Objects: ts.store})
	pubCtx, stopPub := context.WithCancel(ctx)
	pub := ts.publisherTelling(0, changes)
	go pub.Run(pubCtx)
	waitUntil(t, time.Minute, pub.Settled)
	addr, stopPrimary := startPrimary(t, "127.0.0.1:0", changes)

	proxy := startCountingProxy(t, srv.Endpoint)
	objs := openThrough(t, srv, bucket, proxy)
	const fallback = time.Minute
	r := New(Config{Objects: objs, Blobs: objs, Poll: 500 * time.Millisecond, Fallback: fallback, Primary: "http://" + addr + "/"})
	go r.Run(ctx)
	waitUntil(t, time.Minute, func() bool { return r.Ready() && r.Following() })
	followed := time.Now()
	serves := func(body string, by time.Time, why string) {
		t.Helper()
		for {
			if code, got := page(r, "a.sites.test"); code == http.StatusOK && got == body {
				return
			}
			if time.Now().After(by) {
				t.Fatalf("%q not served by %v: %s", body, by.Format(time.TimeOnly), why)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	serves("<h1>one</h1>", time.Now().Add(10*time.Second), "the first poll")

	// following: the store is read every Fallback only, not every Poll
	time.Sleep(2 * time.Second) // the polls of the start, the first answer's
	proxy.take()
	time.Sleep(3 * time.Second)
	if got := proxy.take(); len(got) != 0 {
		t.Fatalf("a replica following the primary read the store while nothing changed: %v", got)
	}
	// a change: served at once. The last poll was after followed - Poll,
	// so the next fallback poll comes after followed + fallback - Poll:
	// only the long poll can explain the change before that.
	ts.set(t, "a", "<h1>two</h1>")
	pub.Mark("a")
	serves("<h1>two</h1>", followed.Add(fallback-5*time.Second), "only the long poll could have told it")

	// the primary goes away: the replica polls the store every Poll
	stopPrimary()
	waitUntil(t, 10*time.Second, func() bool { return !r.Following() })
	ts.set(t, "a", "<h1>three</h1>")
	pub.Mark("a")
	serves("<h1>three</h1>", time.Now().Add(fallback/2), "the replica should poll every Poll without the primary")

	// the primary restarts on the same address: followed again
	stopPub()
	changes = publish.NewChanges(publish.ChangesConfig{Objects: ts.store})
	pub = ts.publisherTelling(0, changes)
	go pub.Run(ctx)
	waitUntil(t, time.Minute, pub.Settled)
	_, stopPrimary = startPrimary(t, addr, changes)
	defer stopPrimary()
	waitUntil(t, time.Minute, r.Following)
	time.Sleep(2 * time.Second) // past the last poll every Poll
	followed = time.Now()
	ts.set(t, "a", "<h1>four</h1>")
	pub.Mark("a")
	serves("<h1>four</h1>", followed.Add(fallback-5*time.Second), "only the long poll could have told it")
}

// TestPushRefused: a replica whose token is not the primary's (a 401)
// does not follow it, and keeps polling the store every Poll.
func TestPushRefused(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := s3test.Start(t)
	bucket := srv.NewBucket(t)
	ts := newTestSites(openThrough(t, srv, bucket, nil))
	ts.set(t, "a", "<h1>one</h1>")
	// the primary's token is another store's: the replica's never matches
	changes := publish.NewChanges(publish.ChangesConfig{Objects: openThrough(t, srv, srv.NewBucket(t), nil)})
	pub := ts.publisherTelling(0, changes)
	go pub.Run(ctx)
	waitUntil(t, time.Minute, pub.Settled)
	if _, err := publish.EnsureToken(ctx, ts.store); err != nil {
		t.Fatal(err)
	}
	addr, stop := startPrimary(t, "127.0.0.1:0", changes)
	defer stop()
	proxy := startCountingProxy(t, srv.Endpoint)
	objs := openThrough(t, srv, bucket, proxy)
	r := New(Config{Objects: objs, Blobs: objs, Poll: 200 * time.Millisecond, Primary: "http://" + addr})
	go r.Run(ctx)
	waitUntil(t, time.Minute, r.Ready)
	time.Sleep(time.Second) // the first long polls: refused
	proxy.take()
	time.Sleep(2 * time.Second)
	if r.Following() {
		t.Fatal("a replica refused by the primary follows it")
	}
	if got := proxy.take(); got["GET feed 304"] < 3 {
		t.Fatalf("a refused replica should poll every Poll: %v in 2 s", got)
	}
}

// startPrimary serves changes at publish.ChangesPath on addr, as the
// primary's route does; stop ends its long polls (Changes.Close, as at a
// shutdown) and closes it.
func startPrimary(t testing.TB, addr string, changes *publish.Changes) (string, func()) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET "+publish.ChangesPath, changes)
	hs := &http.Server{Handler: mux}
	go hs.Serve(ln)
	stopped := false
	return ln.Addr().String(), func() {
		if !stopped {
			stopped = true
			changes.Close()
			hs.Close()
		}
	}
}

// waitUntil waits until cond holds, failing after d.
func waitUntil(t *testing.T, d time.Duration, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
	}
}
