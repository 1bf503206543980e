package hooks

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"sitedrop/hooks/server"
	"sitedrop/sites"
	"sitedrop/sites/replica"
	"sitedrop/sites/serve"
	"sitedrop/sites/store/s3store/s3test"
)

// runProtectedReplica publishes a protected site (password "correct horse
// battery", share link on) and runs `serve --replica` on it with cfg
// changed by edit; it returns the replica's address and the share token.
func runProtectedReplica(t *testing.T, edit func(*Config)) (addr, token string) {
	t.Helper()
	srv := s3test.Start(t)
	sd, done := s3App(t, srv)
	t.Cleanup(done)
	alice, _ := sd.app.FindAuthRecordByEmail("users", "alice@example.com")
	rec := mustDeploy(t, sd, alice, "proxyrep0000001", "proxy-rep", "<h1>secret page</h1>", "P")
	hash, err := sites.HashPassword("correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	on := true
	if rec, err = sd.svc.SetProtection(context.Background(), rec, sites.ProtectionChange{PasswordHash: &hash, Link: &on}); err != nil {
		t.Fatal(err)
	}
	flush(t, sd)

	addr, _, stop := runReplicaCmd(t, sd, edit)
	t.Cleanup(func() { stop() })
	return addr, sites.ProtectionOf(rec).ShareToken()
}

// runReplicaCmd runs `serve --replica` on sd's store, with cfg changed by
// edit (nil: no change), and waits until it is ready. It returns the
// replica's address, its standard output, and stop, which ends it and
// returns server.RunReplica's error.
func runReplicaCmd(t testing.TB, sd *built, edit func(*Config)) (addr string, out *bytes.Buffer, stop func() error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr = ln.Addr().String()
	ln.Close()
	cfg := DefaultConfig()
	cfg.Store, cfg.Serve.HTTPAddr, cfg.Serve.ShutdownTimeout = sd.cfg.Store, addr, time.Second
	if edit != nil {
		edit(&cfg)
	}
	cfg.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	var logs bytes.Buffer
	out = new(bytes.Buffer)
	errc := make(chan error, 1)
	go func() { errc <- server.RunReplica(ctx, cfg.Serve, ServeSettings(&cfg).Replica(), out, &logs) }()
	stop = func() error { cancel(); return <-errc }
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + replica.HealthPath)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			stop()
			t.Fatalf("the replica never became ready: %v; logs: %s", err, logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return addr, out, stop
}

// TestReplicaGateLimitBehindProxy: behind a load balancer in
// --trusted-proxies, a replica counts password attempts per client (the
// X-Forwarded-For one), as the primary does, not per load balancer: one
// client's wrong guesses do not lock the others out.
func TestReplicaGateLimitBehindProxy(t *testing.T) {
	addr, _ := runProtectedReplica(t, func(c *Config) { c.TrustedProxies = []string{"127.0.0.1"} })
	post := func(client, password string) int {
		t.Helper()
		form := url.Values{"password": {password}, "next": {"/"}}
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+serve.GatePath, strings.NewReader(form.Encode()))
		req.Host = "proxy-rep.sites.test"
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Forwarded-For", client)
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for i := range 10 {
		if code := post("203.0.113.7", "wrong password"); code != http.StatusUnauthorized {
			t.Fatalf("attempt %d of the guessing client: %d", i+1, code)
		}
	}
	if code := post("203.0.113.7", "wrong password"); code != http.StatusTooManyRequests {
		t.Fatalf("11th attempt of the guessing client: %d, want 429", code)
	}
	if code := post("198.51.100.9", "correct horse battery"); code != http.StatusSeeOther {
		t.Fatalf("another client behind the same load balancer: %d, want 303", code)
	}
}

// TestReplicaGateCookieSecureBehindTLS: a replica behind a load balancer
// that terminates TLS (an https --public-url, as for the primary) sets the
// gate's cookie as the primary does there: __Host-sitedrop_gate, Secure,
// so a plain-HTTP request to the same host never carries it.
func TestReplicaGateCookieSecureBehindTLS(t *testing.T) {
	addr, token := runProtectedReplica(t, func(c *Config) { c.PublicURL = "https://deploy.example.com" })
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/?"+serve.TokenParam+"="+url.QueryEscape(token), nil)
	req.Host = "proxy-rep.sites.test"
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cookies := resp.Cookies()
	if resp.StatusCode != http.StatusSeeOther || len(cookies) != 1 {
		t.Fatalf("share link: %d, cookies %v", resp.StatusCode, cookies)
	}
	if c := cookies[0]; c.Name != "__Host-sitedrop_gate" || !c.Secure {
		t.Fatalf("cookie behind TLS: %s, Secure %v; want __Host-sitedrop_gate, Secure", c.Name, c.Secure)
	}
}
