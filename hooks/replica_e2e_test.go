package hooks

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"sitedrop/hooks/server"
	"sitedrop/sites"
	"sitedrop/sites/replica"
	"sitedrop/sites/store/s3store/s3test"
)

// testReplica is a replica of the primary sd's store, serving over HTTP.
type testReplica struct {
	*replica.Replica
	url string
}

func startReplica(t *testing.T, sd *built) *testReplica {
	t.Helper()
	s3, err := server.OpenS3Store(sd.cfg.Store)
	if err != nil {
		t.Fatal(err)
	}
	rep := replica.New(replica.Config{Objects: s3, Blobs: s3})
	ts := httptest.NewServer(rep)
	t.Cleanup(ts.Close)
	return &testReplica{Replica: rep, url: ts.URL}
}

// get fetches path of host from the replica, failing the test on a
// transport error (on the test's goroutine only: see fetch).
func (r *testReplica) get(t testing.TB, host, path string) (int, string) {
	t.Helper()
	code, body, err := r.fetch(host, path)
	if err != nil {
		t.Fatal(err)
	}
	return code, body
}

// fetch fetches path of host from the replica.
func (r *testReplica) fetch(host, path string) (int, string, error) {
	req, _ := http.NewRequest(http.MethodGet, r.url+path, nil)
	req.Host = host
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, "", fmt.Errorf("read %s%s: %w", host, path, err)
	}
	return resp.StatusCode, string(body), nil
}

func (r *testReplica) poll(t testing.TB) {
	t.Helper()
	if err := r.Poll(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// bigLen is the size of bigSite's big.bin.
const bigLen = 3 * 699051

// bigSite is a page and a file too large for the content cache (read
// from the store on every request), both marked with v (three letters).
func bigSite(v string) sites.Upload {
	return sites.Upload{StorageType: sites.StorageFiles, Files: []sites.File{
		{Path: "index.html", ContentType: "text/html; charset=utf-8", Data: []byte("<h1>" + v + "</h1>")},
		{Path: "big.bin", ContentType: "application/octet-stream", Data: bytes.Repeat([]byte(v), bigLen/3)},
	}}
}

// TestReplicasServePublishedSites: a deploy on the primary is served by
// two replicas with no database; unknown hosts are 404 without the
// store, a replica that has not listed the sites yet answers 503; a
// change shows on the next poll, a delete too, and a deleted site's
// content outlives it for a replica that has not polled yet.
func TestReplicasServePublishedSites(t *testing.T) {
	srv := s3test.Start(t)
	sd, done := s3App(t, srv)
	defer done()
	ctx := context.Background()
	a, b := startReplica(t, sd), startReplica(t, sd)
	const host = "rep-site.sites.test"
	if code, _ := a.get(t, host, "/"); code != http.StatusServiceUnavailable {
		t.Fatalf("before the first poll: %d, want 503", code)
	}
	if code, _ := a.get(t, "127.0.0.1", replica.HealthPath); code != http.StatusServiceUnavailable {
		t.Fatalf("health before the first poll: %d", code)
	}

	alice, _ := sd.app.FindAuthRecordByEmail("users", "alice@example.com")
	c, err := sd.svc.Create(ctx, sites.CreateParams{Owner: alice, Slug: "rep-site", Upload: bigSite("one")})
	if err != nil {
		t.Fatal(err)
	}
	flush(t, sd)
	for _, r := range []*testReplica{a, b} {
		r.poll(t)
		if code, body := r.get(t, host, "/"); code != http.StatusOK || !strings.Contains(body, "<h1>one</h1>") {
			t.Fatalf("replica: %d %q", code, body)
		}
		if code, body := r.get(t, "REP-SITE.sites.test:8080", "/big.bin"); code != http.StatusOK || len(body) != bigLen {
			t.Fatalf("replica big file: %d, %d bytes", code, len(body))
		}
		if code, _ := r.get(t, "other.sites.test", "/"); code != http.StatusNotFound {
			t.Fatalf("unknown host: %d", code)
		}
		if code, _ := r.get(t, "web.test", "/api/deploy"); code != http.StatusNotFound {
			t.Fatalf("the web host on a replica: %d", code)
		}
		if code, _ := r.get(t, "127.0.0.1", replica.HealthPath); code != http.StatusOK {
			t.Fatalf("health: %d", code)
		}
	}
	// a range is served from a ranged read
	req, _ := http.NewRequest(http.MethodGet, a.url+"/big.bin", nil)
	req.Host, req.Header["Range"] = host, []string{"bytes=3-5"}
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusPartialContent {
		t.Fatalf("range: %v %v", resp, err)
	} else if got, _ := io.ReadAll(resp.Body); string(got) != "one" {
		t.Fatalf("range body %q", got)
	}

	// a replace reaches each replica on its next poll
	if _, err := sd.svc.Replace(ctx, c.Record, sites.Metadata{}, bigSite("two")); err != nil {
		t.Fatal(err)
	}
	flush(t, sd)
	a.poll(t)
	if _, body := a.get(t, host, "/"); !strings.Contains(body, "two") {
		t.Fatalf("after a replace and a poll: %q", body)
	}
	if _, body := b.get(t, host, "/"); !strings.Contains(body, "one") {
		t.Fatalf("a replica switched before its poll: %q", body)
	}

	// deleted and collected: b, not yet told, still serves all of it
	rec, _ := sd.app.FindRecordById(sites.DeploymentsCollection, c.Record.Id)
	if err := sd.app.Delete(rec); err != nil {
		t.Fatal(err)
	}
	flush(t, sd)
	if _, err := sd.svc.CollectGarbage(ctx, time.Nanosecond); err != nil {
		t.Fatal(err)
	}
	if code, body := b.get(t, host, "/big.bin"); code != http.StatusOK || !strings.HasPrefix(body, "oneone") {
		t.Fatalf("a replica not yet told of a delete lost the content: %d", code)
	}
	for _, r := range []*testReplica{a, b} {
		r.poll(t)
		if code, _ := r.get(t, host, "/"); code != http.StatusNotFound {
			t.Fatalf("deleted site on a replica: %d", code)
		}
	}
}

// TestReplicaRedeployUnderLoad: while readers hammer two replicas, the
// site is replaced; every answer is the old site's or the new one's,
// whole, and a replica that has answered new never answers old again.
func TestReplicaRedeployUnderLoad(t *testing.T) {
	srv := s3test.Start(t)
	sd, done := s3App(t, srv)
	defer done()
	ctx := context.Background()
	const host = "load-site.sites.test"
	alice, _ := sd.app.FindAuthRecordByEmail("users", "alice@example.com")
	c, err := sd.svc.Create(ctx, sites.CreateParams{Owner: alice, Slug: "load-site", Upload: bigSite("old")})
	if err != nil {
		t.Fatal(err)
	}
	flush(t, sd)
	reps := []*testReplica{startReplica(t, sd), startReplica(t, sd)}
	for _, r := range reps {
		r.poll(t)
	}
	versions := map[string]int{"old": 1, "new": 2}
	version := func(path, body string) int {
		v := strings.TrimSuffix(strings.TrimPrefix(body, "<h1>"), "</h1>")
		if path == "/big.bin" {
			if len(body) != bigLen {
				return 0
			}
			v = body[:3]
			if strings.Count(body, v) != len(body)/3 {
				return 0 // a mix of two versions' bytes
			}
		}
		return versions[v]
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var problems []string
	seen := make([]int, len(reps))
	for i, r := range reps {
		for _, path := range []string{"/", "/big.bin"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				latest := 0
				for n := 0; n < 2000; n++ {
					select {
					case <-stop:
						return
					default:
					}
					code, body, err := r.fetch(host, path) // not get: t.Fatal only on the test's goroutine
					v := version(path, body)
					mu.Lock()
					switch {
					case err != nil:
						problems = append(problems, path+": "+err.Error())
					case code != http.StatusOK || v == 0:
						problems = append(problems, path+": "+http.StatusText(code)+" or a mixed body")
					case v < latest:
						problems = append(problems, path+": old after new")
					}
					if v > seen[i] {
						seen[i] = v
					}
					mu.Unlock()
					latest = max(latest, v)
				}
			}()
		}
	}
	time.Sleep(50 * time.Millisecond) // let the readers start
	if _, err := sd.svc.Replace(ctx, c.Record, sites.Metadata{}, bigSite("new")); err != nil {
		t.Fatal(err)
	}
	flush(t, sd)
	for _, r := range reps {
		r.poll(t)
	}
	time.Sleep(50 * time.Millisecond) // readers see the new site
	close(stop)
	wg.Wait()
	if len(problems) > 0 {
		t.Fatalf("%d bad answers, first: %s", len(problems), problems[0])
	}
	for i, r := range reps {
		if code, body := r.get(t, host, "/"); code != http.StatusOK || version("/", body) != 2 {
			t.Fatalf("replica %d after the poll: %d %q (readers saw up to %d)", i, code, body, seen[i])
		}
	}
}

// TestReplicaStoreDownAndBack: with the store stopped, replicas keep
// serving the sites they have cached (a site they never read answers
// 503) and polls fail; once it is back, a change committed on the primary
// meanwhile (a rollback, whose publish failed) propagates.
func TestReplicaStoreDownAndBack(t *testing.T) {
	srv := s3test.Start(t)
	sd, done := s3App(t, srv)
	defer done()
	ctx := context.Background()
	alice, _ := sd.app.FindAuthRecordByEmail("users", "alice@example.com")
	rec := mustDeploy(t, sd, alice, "downsite0000001", "kept-site", "<h1>first</h1>", "Kept")
	if _, err := sd.svc.Replace(ctx, rec, sites.Metadata{}, htmlUpload("<h1>kept</h1>")); err != nil {
		t.Fatal(err)
	}
	mustDeploy(t, sd, alice, "downsite0000002", "cold-site", "<h1>cold</h1>", "Cold")
	flush(t, sd)
	reps := []*testReplica{startReplica(t, sd), startReplica(t, sd)}
	for _, r := range reps {
		r.poll(t)
		if code, _ := r.get(t, "kept-site.sites.test", "/"); code != http.StatusOK {
			t.Fatalf("before the outage: %d", code)
		}
	}

	// a rollback commits while the store is down: its publish fails
	srv.Stop()
	rec, _ = sd.app.FindRecordById(sites.DeploymentsCollection, rec.Id)
	if _, err := sd.svc.Rollback(context.Background(), rec, 1); err != nil {
		t.Fatal(err)
	}
	fctx, fcancel := context.WithTimeout(ctx, 5*time.Second)
	defer fcancel()
	if err := sd.publisher.Flush(fctx); err == nil {
		t.Fatal("a publish to a stopped store succeeded")
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for _, r := range reps {
		if err := r.Poll(pctx); err == nil {
			t.Fatal("a poll of a stopped store succeeded")
		}
		if code, body := r.get(t, "kept-site.sites.test", "/"); code != http.StatusOK || !strings.Contains(body, "kept") {
			t.Fatalf("store down: cached site answered %d %q", code, body)
		}
		if code, _ := r.get(t, "cold-site.sites.test", "/"); code != http.StatusServiceUnavailable {
			t.Fatalf("store down: an uncached site answered %d, want 503", code)
		}
	}

	srv.Restart(t)
	flush(t, sd) // the publisher's retry (Run does it with backoff)
	for _, r := range reps {
		r.poll(t)
		if code, body := r.get(t, "kept-site.sites.test", "/"); code != http.StatusOK || !strings.Contains(body, "first") {
			t.Fatalf("store back: %d %q", code, body)
		}
		if code, _ := r.get(t, "cold-site.sites.test", "/"); code != http.StatusOK {
			t.Fatalf("store back: cold site %d", code)
		}
	}
}
