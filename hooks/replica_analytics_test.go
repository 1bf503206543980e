package hooks

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"sitedrop/hooks/server"
	"sitedrop/sites"
	"sitedrop/sites/analytics"
	"sitedrop/sites/analytics/ship"
	"sitedrop/sites/analytics/statsdb"
	"sitedrop/sites/store/s3store"
	"sitedrop/sites/store/s3store/s3test"
)

// TestReplicasCountVisits: page views sent to two replicas and to the
// primary add up exactly in GET /deploy/{id}/analytics within three
// minutes, and a visitor seen by all three counts once. The replicas
// (the real `serve --replica`) ship every 200 ms; the primary's flush job
// is run as its cron would run it. Replica b ships only hourly and is
// stopped right after its views: they arrive through its last ship, at
// shutdown (SIGTERM). The merged deltas are deleted from the store.
func TestReplicasCountVisits(t *testing.T) {
	srv := s3test.Start(t)
	app, sd := newBareApp(t, func(c *Config) { c.Store, c.Analytics = srv.URL(srv.NewBucket(t), "sd"), true })
	defer app.Cleanup()
	alice := mustUser(t, app, "alice@example.com", sites.PlanPro, fixtureKey("alice"))
	rec := mustDeploy(t, sd, alice, "countsite000001", "count-site", "<h1>counted</h1>", "Counted")
	flush(t, sd)
	sd.statsFlush.FlushPeriodic() // the primary's job at start: the day's salt
	replicaCfg := func(c *Config) {
		c.TrustedProxies = []string{"127.0.0.1"} // the visitor is X-Forwarded-For
		c.AnalyticsShip = 200 * time.Millisecond
	}
	addrA, _, stopA := runReplicaCmd(t, sd, replicaCfg)
	addrB, _, stopB := runReplicaCmd(t, sd, func(c *Config) {
		replicaCfg(c)
		c.AnalyticsShip = time.Hour // only its last ship, at shutdown
	})
	defer stopA()

	const host = "count-site.sites.test"
	const browser = "Mozilla/5.0 (X11; Linux x86_64; rv:130.0) Gecko/20100101 Firefox/130.0"
	onReplica := func(addr, ip, path, referer string, want int) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+path, nil)
		req.Host = host
		req.Header.Set("User-Agent", browser)
		req.Header.Set("X-Forwarded-For", ip)
		if referer != "" {
			req.Header.Set("Referer", referer)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("replica %s%s: %d, want %d", addr, path, resp.StatusCode, want)
		}
	}
	onPrimary := func(ip string) {
		t.Helper()
		req := httptest.NewRequest(http.MethodGet, "http://"+host+"/", nil)
		req.RemoteAddr = ip + ":40000"
		req.Header.Set("User-Agent", browser)
		w := httptest.NewRecorder()
		sd.server.ServeSite(w, req, "count-site")
		if w.Code != http.StatusOK {
			t.Fatalf("primary: %d", w.Code)
		}
	}
	repeat := func(n int, f func()) {
		for range n {
			f()
		}
	}
	// visitor 1 on all three, 2 on b only, 3 on the primary only, 4 on a only
	repeat(3, func() { onReplica(addrA, "198.51.100.1", "/", "", 200) })
	repeat(2, func() { onReplica(addrB, "198.51.100.1", "/", "https://news.example/post", 200) })
	repeat(1, func() { onPrimary("198.51.100.1") })
	repeat(4, func() { onReplica(addrB, "198.51.100.2", "/", "", 200) })
	repeat(2, func() { onPrimary("198.51.100.3") })
	repeat(5, func() { onReplica(addrA, "198.51.100.4", "/", "", 200) })
	repeat(2, func() { onReplica(addrA, "198.51.100.4", "/missing", "", 404) })
	if err := stopB(); err != nil { // SIGTERM: b's views go with its last ship
		t.Fatal(err)
	}
	const wantViews, wantVisitors, wantNotFound = 17, 4, 2

	mux := newMux(t, app)
	var got statsdb.Report
	start := time.Now()
	deadline := start.Add(3 * time.Minute)
	for {
		sd.statsFlush.FlushPeriodic() // the cron's every-minute job, sooner
		res, body := do(t, mux, http.MethodGet, "/deploy/"+rec.Id+"/analytics", "", bearer(fixtureKey("alice")))
		if res.StatusCode != http.StatusOK {
			t.Fatalf("analytics: %d %s", res.StatusCode, body)
		}
		got = statsdb.Report{}
		if err := json.Unmarshal([]byte(body), &got); err != nil {
			t.Fatal(err)
		}
		today := got.Days[len(got.Days)-1]
		if today.PageViews == wantViews && today.NotFound == wantNotFound {
			if today.Visitors != wantVisitors {
				t.Fatalf("visitors %d, want %d: one visitor on three nodes counts once", today.Visitors, wantVisitors)
			}
			break
		}
		if today.PageViews > wantViews || time.Now().After(deadline) {
			t.Fatalf("after %v: %+v, want %d page views and %d 404s", time.Since(start), today, wantViews, wantNotFound)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(got.Referrers) != 1 || got.Referrers[0] != (analytics.Count{Key: "news.example", Count: 2}) {
		t.Errorf("referrers %+v, want news.example 2 (from replica b)", got.Referrers)
	}
	if len(got.NotFoundPaths) != 1 || got.NotFoundPaths[0] != (analytics.Count{Key: "/missing", Count: 2}) {
		t.Errorf("404 paths %+v, want /missing 2 (from replica a)", got.NotFoundPaths)
	}
	var left []string
	if err := sd.s3.ListObjects(context.Background(), ship.DeltasPrefix, func(o s3store.ObjectInfo) error {
		left = append(left, o.Key)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("merged deltas left in the store: %v", left)
	}
}

// TestReplicaLastShipBounded: at SIGTERM with a store that accepts and
// never answers, a replica gives up its last ship after
// server.ShipAtShutdown and exits.
func TestReplicaLastShipBounded(t *testing.T) {
	srv := s3test.Start(t)
	sd, done := s3App(t, srv)
	defer done()
	alice, _ := sd.app.FindAuthRecordByEmail("users", "alice@example.com")
	mustDeploy(t, sd, alice, "boundsite000001", "bound-site", "<h1>bound</h1>", "Bound")
	flush(t, sd)
	addr, _, stop := runReplicaCmd(t, sd, func(c *Config) { c.AnalyticsShip = time.Hour })
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/", nil)
	req.Host = "bound-site.sites.test"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	srv.Stop()
	hole, err := net.Listen("tcp", strings.TrimPrefix(srv.Endpoint, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer hole.Close()
	go func() {
		for {
			c, err := hole.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, unanswered, until the test ends
		}
	}()
	start := time.Now()
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > server.ShipAtShutdown+5*time.Second {
		t.Fatalf("the replica took %v to stop, past its bound", took)
	}
}
