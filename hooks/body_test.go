package hooks

import (
	"sitedrop/sites/intake"
	"sitedrop/sites/ratelimit"

	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// rawRequest opens a connection to srv and sends a request's head and the
// first part of its body (the body is contentLength long); the rest is up
// to the caller.
func rawRequest(t *testing.T, srv *httptest.Server, method, path, contentType, key string, contentLength int, first string) net.Conn {
	t.Helper()
	u, _ := url.Parse(srv.URL)
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	head := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: web.test\r\nContent-Type: %s\r\nContent-Length: %d\r\n", method, path, contentType, contentLength)
	if key != "" {
		head += "Authorization: Bearer " + key + "\r\n"
	}
	if _, err := io.WriteString(c, head+"\r\n"+first); err != nil {
		t.Fatal(err)
	}
	return c
}

// readRaw reads the response on c (within 5 s).
func readRaw(t *testing.T, c net.Conn) (*http.Response, string) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("reading the response: %v", err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	return res, string(b)
}

// deployLive sends a JSON deploy with key to srv and returns the status
// and body; the client gives up after 10 s.
func deployLive(t *testing.T, srv *httptest.Server, key, body string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/deploy", strings.NewReader(body))
	req.Host = "web.test"
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("deploy: %v", err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	return res, string(b)
}

// TestSlowBodies: a client trickling its body does not hold the only
// deploy slot (bodies are read before a slot is taken), and a body slower
// than the minimum rate is refused with 408, JSON and archive alike.
func TestSlowBodies(t *testing.T) {
	app, sd := newFixtureApp(t, func(c *Config) { c.ConcurrentDeploys = 1 })
	srv := httptest.NewServer(newMux(t, app))
	t.Cleanup(srv.Close) // after the connections' own cleanups

	slow := rawRequest(t, srv, "POST", "/deploy", "application/json", keyPia, 1000, `{"html":"`)
	for _, slug := range []string{"fast-one", "fast-two"} {
		res, body := deployLive(t, srv, keyAlice, `{"html":"<p>fast</p>","slug":"`+slug+`"}`)
		if res.StatusCode != 200 {
			t.Fatalf("deploy beside a slow body: %d %s", res.StatusCode, body)
		}
	}
	slow.Close()

	sd.BodyGrace, sd.BodyMinRate = 300*time.Millisecond, 1024
	for _, c := range []struct{ path, contentType, first string }{
		{"/deploy", "application/json", `{"html":"`},
		{"/deploy?slug=slow-zip", "application/zip", "PK\x03\x04"},
		{"/deploy?slug=slow-tgz", "application/gzip", "\x1f\x8b"},
		{"/blobs/" + strings.Repeat("a", 64), "application/octet-stream", "abc"},
	} {
		method := "PUT"
		if strings.HasPrefix(c.path, "/deploy") {
			method = "POST"
		}
		conn := rawRequest(t, srv, method, c.path, c.contentType, keyPia, 1000, c.first)
		res, body := readRaw(t, conn)
		if res.StatusCode != http.StatusRequestTimeout || !strings.Contains(body, `{"error":"Request body too slow: after 300ms it must arrive at 1 KiB a second or more"}`) {
			t.Errorf("%s: %d %s", c.path, res.StatusCode, body)
		}
	}
	// a refused archive is read and dropped (see intake.Guards.Discard) at the
	// same rate: a trickle gets its answer, not a connection held open
	conn := rawRequest(t, srv, "POST", "/deploy?slug=alice-site", "application/zip", keyPia, 1000, "PK\x03\x04")
	if res, body := readRaw(t, conn); res.StatusCode != 409 {
		t.Errorf("slow archive to a taken slug: %d %s", res.StatusCode, body)
	}
	if n := sd.Memory.InUse(); n != 0 {
		t.Errorf("%d bytes of the memory budget still held", n)
	}
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestDeployMemoryBudget: the bytes of bodies held by deploys in progress
// count against one budget; a deploy that finds it exhausted is answered
// 503 with Retry-After, and the budget is given back whole after a
// success, a refusal and a client that goes away.
func TestDeployMemoryBudget(t *testing.T) {
	app, sd := newFixtureApp(t)
	sd.Memory = intake.NewBudget(150 << 10) // a JSON body counts twice once decoded
	sd.MemoryWait = 200 * time.Millisecond
	srv := httptest.NewServer(newMux(t, app))
	t.Cleanup(srv.Close) // after the connections' own cleanups
	free := func() bool { return sd.Memory.InUse() == 0 }

	// a deploy whose body has arrived for the most part holds 60 KiB
	held := `{"slug":"held","html":"` + strings.Repeat("a", 60<<10)
	rest := `"}`
	slow := rawRequest(t, srv, "POST", "/deploy", "application/json", keyPia, len(held)+len(rest), held)
	waitFor(t, "the slow body to be reserved", func() bool { return sd.Memory.InUse() >= 60<<10 })

	big := `{"slug":"big","html":"` + strings.Repeat("b", 50<<10) + `"}`
	res, body := deployLive(t, srv, keyAlice, big)
	if res.StatusCode != 503 || body != errBody(msgServerBusy)+"\n" || res.Header.Get("Retry-After") != "5" {
		t.Fatalf("deploy past the budget: %d %q Retry-After %q", res.StatusCode, body, res.Header.Get("Retry-After"))
	}

	io.WriteString(slow, rest)
	if res, body := readRaw(t, slow); res.StatusCode != 200 {
		t.Fatalf("held deploy: %d %s", res.StatusCode, body)
	}
	waitFor(t, "the budget after a success", free)

	if res, body := deployLive(t, srv, keyAlice, big); res.StatusCode != 200 {
		t.Fatalf("deploy once the budget is free: %d %s", res.StatusCode, body)
	}
	waitFor(t, "the budget after a second success", free)

	// refusals: a taken slug, malformed JSON, an archive bomb
	if res, body := deployLive(t, srv, keyPia, `{"slug":"alice-site","html":"`+strings.Repeat("c", 30<<10)+`"}`); res.StatusCode != 409 {
		t.Fatalf("taken slug: %d %s", res.StatusCode, body)
	}
	waitFor(t, "the budget after a refusal", free)
	if res, body := deployLive(t, srv, keyPia, `{"html":`+strings.Repeat("[", 30<<10)); res.StatusCode != 400 {
		t.Fatalf("malformed: %d %s", res.StatusCode, body)
	}
	waitFor(t, "the budget after malformed JSON", free)
	for _, c := range []struct {
		contentType string
		body        *bytes.Reader
		status      int
	}{
		{"application/gzip", tarGzOf(t, "a.txt", strings.Repeat("0", 100<<10), "b.txt", strings.Repeat("1", 100<<10)), 503}, // unpacked bytes count: past the budget
		{"application/zip", zipOf(t, "index.html", strings.Repeat("z", 40<<10)), 200},
	} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/deploy", c.body)
		req.Host = "web.test"
		req.Header.Set("Content-Type", c.contentType)
		req.Header.Set("Authorization", "Bearer "+keyPia)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != c.status {
			t.Fatalf("%s deploy: %d %s", c.contentType, res.StatusCode, b)
		}
		waitFor(t, "the budget after an archive deploy", free)
	}

	// a client that goes away halfway
	gone := rawRequest(t, srv, "POST", "/deploy", "application/json", keyPia, 60<<10, `{"html":"`+strings.Repeat("d", 30<<10))
	waitFor(t, "the aborted body to be reserved", func() bool { return sd.Memory.InUse() >= 30<<10 })
	gone.Close()
	waitFor(t, "the budget after an abort", free)
}

// TestAnonStoragePerIP: anonymous deploys from one address store at most
// --anon-storage-per-ip in an --anon-ttl window; another address is not
// affected, and one deploy larger than the whole budget is a 413.
func TestAnonStoragePerIP(t *testing.T) {
	app, sd := newFixtureApp(t, func(c *Config) { c.AnonStoragePerIP = 100 << 10 })
	mux := newMux(t, app)
	send := func(ip string, size int) (*http.Response, string) {
		req := newRequest("POST", "http://web.test/deploy", `{"html":"`+strings.Repeat("x", size)+`"}`, map[string]string{"Content-Type": "application/json"})
		req.RemoteAddr = ip + ":1234"
		res := roundTrip(t, mux, req)
		b, _ := io.ReadAll(res.Body)
		return res, string(b)
	}
	for i := range 2 {
		if res, body := send("192.0.2.1", 40<<10); res.StatusCode != 200 {
			t.Fatalf("anonymous deploy %d: %d %s", i, res.StatusCode, body)
		}
	}
	res, body := send("192.0.2.1", 40<<10)
	if res.StatusCode != 429 || !strings.Contains(body, "Anonymous storage limit reached: at most 100 KiB from one address") || res.Header.Get("Retry-After") == "" {
		t.Fatalf("past the storage budget: %d %s Retry-After %q", res.StatusCode, body, res.Header.Get("Retry-After"))
	}
	if res, body := send("198.51.100.7", 40<<10); res.StatusCode != 200 {
		t.Fatalf("another address: %d %s", res.StatusCode, body)
	}
	sd.AnonStorage = ratelimit.New(10<<10, time.Hour)
	if res, body := send("198.51.100.8", 20<<10); res.StatusCode != 413 || !strings.Contains(body, "Site too large for an anonymous deploy: the limit is 10 KiB") {
		t.Fatalf("larger than the budget: %d %s", res.StatusCode, body)
	}
}

// TestBodyFlags: the new sizes take the --max-body syntax.
func TestBodyFlags(t *testing.T) {
	cfg := DefaultConfig()
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	BindFlags(fs, &cfg)
	if cfg.DeployMemory != 512<<20 || cfg.AnonStoragePerIP != 100<<20 {
		t.Fatalf("defaults: %d %d", cfg.DeployMemory, cfg.AnonStoragePerIP)
	}
	if err := fs.Parse([]string{"--deploy-memory", "1GiB", "--anon-storage-per-ip", "10MB"}); err != nil {
		t.Fatal(err)
	}
	if cfg.DeployMemory != 1<<30 || cfg.AnonStoragePerIP != 10_000_000 {
		t.Fatalf("parsed: %d %d", cfg.DeployMemory, cfg.AnonStoragePerIP)
	}
}

// TestDeployMemoryFitsTheLargestDeploy: --deploy-memory is raised to what
// one deploy of the largest size may hold (intake.DeployMemoryFactor times
// --max-body), so that no deploy within the limits is refused forever.
func TestDeployMemoryFitsTheLargestDeploy(t *testing.T) {
	scenarios := []struct {
		name            string
		maxBody, memory int64
		want            int64
	}{
		{"defaults", 0, 0, 512 << 20},
		{"set above", 10 << 20, 100 << 20, 100 << 20},
		{"set below", 50 << 20, 64 << 20, intake.DeployMemoryFactor * 50 << 20},
		{"a larger body, the default budget", 200 << 20, 0, intake.DeployMemoryFactor * 200 << 20},
	}
	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) {
			cfg := Config{MaxBody: s.maxBody, DeployMemory: s.memory}
			cfg.withDefaults()
			if cfg.DeployMemory != s.want {
				t.Errorf("DeployMemory = %d, want %d", cfg.DeployMemory, s.want)
			}
		})
	}
}

// TestLongUploadOutlivesWriteTimeout: a body that arrives within the
// minimum rate may take longer than the server's WriteTimeout (PocketBase
// sets 5 minutes); its answer must still be written, or the client sees
// the connection drop after its deploy was committed.
func TestLongUploadOutlivesWriteTimeout(t *testing.T) {
	app, sd := newFixtureApp(t)
	sd.BodyGrace, sd.BodyMinRate = time.Second, 1
	srv := httptest.NewUnstartedServer(newMux(t, app))
	srv.Config.WriteTimeout = 300 * time.Millisecond
	srv.Start()
	t.Cleanup(srv.Close)

	body := `{"html":"<p>slow but steady</p>","slug":"steady-site"}`
	conn := rawRequest(t, srv, "POST", "/deploy", "application/json", keyPia, len(body), body[:10])
	for _, part := range []string{body[10:20], body[20:30], body[30:]} {
		time.Sleep(250 * time.Millisecond) // 750 ms in all: past the WriteTimeout
		if _, err := io.WriteString(conn, part); err != nil {
			t.Fatal(err)
		}
	}
	res, got := readRaw(t, conn)
	if res.StatusCode != 200 || !strings.Contains(got, `"slug":"steady-site"`) {
		t.Fatalf("deploy: %d %s", res.StatusCode, got)
	}
}
