package hooks

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"sitedrop/sites/publish"
	"sitedrop/sites/store/s3store/s3test"
	"sitedrop/sites/wire"
)

// TestReplicaFollowsPrimary runs a primary (`serve --store s3://…`) and
// `serve --replica --primary <its URL>` on versitygw. The primary's
// GET /api/replica/changes is the web host's only, and refuses a request
// without the replica token (which it wrote to the store) with a 401. The
// replica follows it (sitedrop_replica_push_connected 1): a site deployed
// on the primary is served by the replica before the replica's fallback
// poll (every 15 s while it follows) could have run. A SIGTERM of the
// primary is not held up by the replica's waiting long poll (50 s), and
// the replica then falls back to polling (the gauge 0).
func TestReplicaFollowsPrimary(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers")
	}
	srv := s3test.Start(t)
	store := srv.URL(srv.NewBucket(t), "sd")
	addr := loopback(freePort(t))
	primary := startServe(t, copyData(t, templates.fixtures(t)), func(c *Config) { c.Store = store }, addr,
		"--http", addr, "--shutdown-timeout", "5m")
	sd := primary.sd
	for deadline := time.Now().Add(30 * time.Second); !sd.publisher.Settled(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the primary never published its sites")
		}
	}

	ask := func(host, auth string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+publish.ChangesPath+"?after=", nil)
		req.Host = host
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, body := ask("web.test", ""); code != http.StatusUnauthorized || !strings.Contains(body, `"error":"Unauthorized"`) {
		t.Fatalf("no token: %d %s", code, body)
	}
	token, err := publish.ReadToken(context.Background(), sd.s3)
	if err != nil {
		t.Fatalf("the primary wrote no replica token: %v", err)
	}
	if code, body := ask("web.test", "Bearer "+token); code != http.StatusOK || !strings.Contains(body, `"position":"`) {
		t.Fatalf("with the token: %d %s", code, body)
	}
	if code, body := ask("some-site.sites.test", "Bearer "+token); code != http.StatusNotFound || strings.Contains(body, "position") {
		t.Fatalf("on a site host: %d %s, want the site server's 404", code, body)
	}

	maddr := loopback(freePort(t))
	raddr, _, stopReplica := runReplicaCmd(t, sd, func(c *Config) {
		c.Serve.Primary, c.Serve.MetricsAddr = "http://"+addr, maddr
	})
	defer stopReplica()
	connected := func(want float64) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); metricValue(scrapeMetrics(t, maddr), "sitedrop_replica_push_connected") != want; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("sitedrop_replica_push_connected never became %v", want)
			}
		}
	}
	connected(1)
	// Past the replica's polls every 2 s before it followed: its next
	// poll of the store is its fallback's, 15 s after its last.
	time.Sleep(3 * time.Second)
	followed := time.Now()

	body := `{"html":"<h1>pushed to the replica</h1>"}`
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/deploy", strings.NewReader(body))
	req.Host = "web.test"
	req.Header.Set("Authorization", "Bearer "+keyPia)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var answer wire.DeployAnswer
	err = json.NewDecoder(resp.Body).Decode(&answer)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || err != nil {
		t.Fatalf("deploy: %d %v", resp.StatusCode, err)
	}
	for deadline := followed.Add(12 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		code, page := listenerGet(t, raddr, answer.Slug+".sites.test", "/")
		if code == http.StatusOK && strings.Contains(page, "pushed to the replica") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the replica did not serve the new site before its fallback poll: %d", code)
		}
	}

	// the drain ends the waiting long poll: it does not wait for it (up
	// to 50 s)
	stopped := make(chan struct{})
	go func() { primary.stop(t); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("the primary's drain waits on the replica's long poll")
	}
	connected(0)
}
