package replica

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"sitedrop/sites/publish"
	"sitedrop/sites/store/s3store/s3test"
)

// envInt is the environment variable name as an int, def when unset.
func envInt(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		b.Fatalf("%s=%q: want a positive number", name, v)
	}
	return n
}

// envDuration is the environment variable name as a duration.
func envDuration(b *testing.B, name string, def time.Duration) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		b.Fatalf("%s=%q: want a duration", name, v)
	}
	return d
}

// BenchmarkChangeFeed measures the change feed on versitygw with
// FEED_HOSTS published hosts (default 10,000) and FEED_REPLICAS replicas
// (default 3) polling every FEED_POLL (default 2 s), each through its own
// request-counting proxy:
//
//   - idle-req/replica/min: the store requests a replica makes per minute
//     when nothing changes, over FEED_IDLE (default 60 s);
//   - propagation: FEED_CHANGES changes (default 100), one every 200–400
//     ms to hosts at random, each timed from the publisher being told
//     (Publisher.Mark, its Run loop publishing at once) to each replica
//     serving the new page; p50, p99 and max over every change × replica.
//
// With FEED_PUSH=1 the publisher tells a publish.Changes, whose handler
// (the primary's route, publish.ChangesPath) is served on loopback, and
// the replicas follow it (Config.Primary, serve --replica --primary):
// they poll the store at once when it answers, and every FEED_FALLBACK
// (default 15 s) only while they follow it.
//
// Run it once: go test -run '^$' -bench ChangeFeed -benchtime 1x
// -timeout 30m ./sites/replica/ (bench/feed.sh does).
func BenchmarkChangeFeed(b *testing.B) {
	hosts := envInt(b, "FEED_HOSTS", 10_000)
	nrep := envInt(b, "FEED_REPLICAS", 3)
	changes := envInt(b, "FEED_CHANGES", 100)
	poll := envDuration(b, "FEED_POLL", DefaultPoll)
	idle := envDuration(b, "FEED_IDLE", time.Minute)
	push := os.Getenv("FEED_PUSH") == "1"
	fallback := envDuration(b, "FEED_FALLBACK", DefaultFallback)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	srv := s3test.Start(b)
	bucket := srv.NewBucket(b)
	ts := newTestSites(openThrough(b, srv, bucket, nil))
	for i := range hosts {
		ts.set(b, fmt.Sprint("h", i), "<h1>first</h1>")
	}
	var told *publish.Changes // the primary's long polls, with FEED_PUSH=1
	primary := ""
	if push {
		told = publish.NewChanges(publish.ChangesConfig{Objects: ts.store})
		addr, stop := startPrimary(b, "127.0.0.1:0", told)
		defer stop()
		primary = "http://" + addr
	}
	pub := ts.publisherTelling(0, told)
	start := time.Now()
	go pub.Run(ctx) // its first reconcile publishes every host
	for !pub.Settled() {
		time.Sleep(10 * time.Millisecond)
	}
	b.Logf("published %d hosts in %v", hosts, time.Since(start).Round(time.Millisecond))

	reps := make([]*Replica, nrep)
	proxies := make([]*countingProxy, nrep)
	for i := range reps {
		proxies[i] = startCountingProxy(b, srv.Endpoint)
		objs := openThrough(b, srv, bucket, proxies[i])
		reps[i] = New(Config{Objects: objs, Blobs: objs, Poll: poll, Primary: primary, Fallback: fallback})
		go reps[i].Run(ctx)
	}
	for _, r := range reps {
		for !r.Ready() || (push && !r.Following()) {
			time.Sleep(10 * time.Millisecond)
		}
	}
	time.Sleep(2 * poll) // past the lists of the start
	first := proxies[0].take()
	b.Logf("replica 0 until ready and settled: %v", first)

	// idle
	for _, p := range proxies {
		p.take()
	}
	time.Sleep(idle)
	var idleReqs int64
	var kinds []map[string]int
	for _, p := range proxies {
		k := p.take()
		kinds = append(kinds, k)
		for _, n := range k {
			idleReqs += int64(n)
		}
	}
	perMin := float64(idleReqs) / float64(nrep) / idle.Minutes()
	b.Logf("idle over %v: %v", idle, kinds)

	// propagation
	var mu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	for c := range changes {
		slug := fmt.Sprint("h", rand.IntN(hosts))
		body := fmt.Sprintf("<h1>change %d</h1>", c)
		ts.set(b, slug, body) // the blob is stored before the clock starts
		t0 := time.Now()
		pub.Mark(slug)
		for _, r := range reps {
			wg.Add(1)
			go func() {
				defer wg.Done()
				deadline := t0.Add(30 * time.Second)
				for time.Now().Before(deadline) {
					if code, got := page(r, slug+".sites.test"); code == http.StatusOK && got == body {
						mu.Lock()
						lat = append(lat, time.Since(t0))
						mu.Unlock()
						return
					}
					time.Sleep(5 * time.Millisecond)
				}
				b.Errorf("%s: change %d not served within 30 s", slug, c)
			}()
		}
		time.Sleep(time.Duration(200+rand.IntN(200)) * time.Millisecond)
	}
	wg.Wait()
	slices.Sort(lat)
	q := func(f float64) time.Duration { return lat[min(len(lat)-1, int(f*float64(len(lat))))] }
	b.ReportMetric(perMin, "idle-req/replica/min")
	b.ReportMetric(float64(q(0.50).Milliseconds()), "p50-ms")
	b.ReportMetric(float64(q(0.99).Milliseconds()), "p99-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Milliseconds()), "max-ms")
	mode := "poll " + poll.String()
	if push {
		mode = "push, fallback poll " + fallback.String()
		for i, r := range reps {
			if !r.Following() {
				b.Errorf("replica %d no longer follows the primary", i)
			}
		}
	}
	b.Logf("%d hosts, %d replicas, %s: idle %.1f requests/replica/min; propagation over %d samples p50 %v p99 %v max %v",
		hosts, nrep, mode, perMin, len(lat), q(0.50).Round(time.Millisecond), q(0.99).Round(time.Millisecond), lat[len(lat)-1].Round(time.Millisecond))
}
