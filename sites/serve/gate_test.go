package serve

import (
	"bufio"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"sitedrop/sites"
)

// testPassword is the password of the protected test sites; its hash is
// made once (bcrypt is slow on purpose).
const testPassword = "correct horse battery"

var testHash = sync.OnceValue(func() string {
	h, err := sites.HashPassword(testPassword)
	if err != nil {
		panic(err)
	}
	return h
})

const (
	gatedPage  = "<h1>secret page</h1>"
	gatedAsset = "console.log('secret asset')"
)

var gatedFiles = map[string][2]string{
	"index.html":          {htmlType, gatedPage},
	"docs/index.html":     {htmlType, "docs"},
	"app.3f2a1b9c.js":     {"text/javascript; charset=utf-8", gatedAsset},
	"_headers":            {"text/plain", "/open/*\n  Cache-Control: public, max-age=600\n"},
	"open/index.html":     {htmlType, "open"},
	"404.html":            {htmlType, "custom 404"},
	".sitedrop/gate.html": {htmlType, "a file at the gate's path"},
}

// protectedServer serves a protected "demo" site (id "site-a"); the
// returned *sites.Site may be changed, then s.Changing("demo")() called.
func protectedServer(t *testing.T, p sites.Protection) (*Server, *sites.Site) {
	t.Helper()
	if p.Secret == "" {
		p.Secret = "secret-of-site-a"
	}
	site := &sites.Site{ID: "site-a", Slug: "demo", Status: sites.StatusActive, Protection: &p}
	srv, _ := newTestServer(t, site, gatedFiles)
	return srv, site
}

// validCookie is a gate cookie that site's gate accepts now.
func validCookie(srv *Server, site *sites.Site) string {
	return gateCookieName + "=" + signGateCookie(site.Protection.CookieKey(), site.ID, srv.now().Add(time.Hour))
}

// TestGateAnswers: without the cookie every path of a protected site
// answers the gate page (no file bytes); with it, the site as usual, every
// answer Cache-Control: private.
func TestGateAnswers(t *testing.T) {
	srv, site := protectedServer(t, sites.Protection{PasswordHash: testHash(), Link: true})
	good := validCookie(srv, site)
	other := gateCookieName + "=" + signGateCookie((&sites.Protection{Link: true, Secret: "secret-of-site-b"}).CookieKey(), "site-b", srv.now().Add(time.Hour))
	forgedID := gateCookieName + "=" + signGateCookie((&sites.Protection{Link: true, Secret: "secret-of-site-b"}).CookieKey(), "site-a", srv.now().Add(time.Hour))
	expired := gateCookieName + "=" + signGateCookie(site.Protection.CookieKey(), site.ID, srv.now().Add(-time.Second))
	tampered := strings.Replace(good, "site-a.", "site-a.9", 1)
	etag := `"` + site.Files["index.html"].Hash + `"`
	cases := []struct {
		name, method, path string
		headers            map[string]string
		status             int
		cache              string
		body               string // contained in the body
	}{
		{"page without cookie", "GET", "/", nil, 401, "no-store", `name="password"`},
		{"asset without cookie: 401, no bytes", "GET", "/app.3f2a1b9c.js", nil, 401, "no-store", "This site is protected"},
		{"missing path without cookie", "GET", "/nope", nil, 401, "no-store", "This site is protected"},
		{"redirecting path without cookie", "GET", "/index.html", nil, 401, "no-store", "This site is protected"},
		{"HEAD without cookie", "HEAD", "/", nil, 401, "no-store", ""},
		{"cookie of site B on site A", "GET", "/", map[string]string{"Cookie": other}, 401, "no-store", "protected"},
		{"cookie naming site A signed with B's key", "GET", "/", map[string]string{"Cookie": forgedID}, 401, "no-store", "protected"},
		{"expired cookie", "GET", "/", map[string]string{"Cookie": expired}, 401, "no-store", "protected"},
		{"tampered cookie", "GET", "/", map[string]string{"Cookie": tampered}, 401, "no-store", "protected"},
		{"page with cookie", "GET", "/", map[string]string{"Cookie": good}, 200, "private, no-cache", gatedPage},
		{"secure cookie name", "GET", "/", map[string]string{"Cookie": "__Host-" + good}, 200, "private, no-cache", gatedPage},
		{"asset with cookie", "GET", "/app.3f2a1b9c.js", map[string]string{"Cookie": good}, 200, "private, max-age=31536000, immutable", gatedAsset},
		{"304", "GET", "/", map[string]string{"Cookie": good, "If-None-Match": etag}, 304, "private, no-cache", ""},
		{"206", "GET", "/", map[string]string{"Cookie": good, "Range": "bytes=0-3"}, 206, "private, no-cache", "<h1>"},
		{"308", "GET", "/docs", map[string]string{"Cookie": good}, 308, "private, no-cache", ""},
		{"404", "GET", "/nope", map[string]string{"Cookie": good}, 404, "private, no-cache", "custom 404"},
		{"_headers asking for public", "GET", "/open/", map[string]string{"Cookie": good}, 200, "private, max-age=600", "open"},
		{"a GET of the gate's path is the site's", "GET", "/.sitedrop/gate", map[string]string{"Cookie": good}, 200, "private, no-cache", "a file at the gate's path"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := get(srv, c.method, c.path, c.headers)
			b := body(res)
			if res.StatusCode != c.status || res.Header.Get("Cache-Control") != c.cache || !strings.Contains(b, c.body) {
				t.Fatalf("%d %q %q", res.StatusCode, res.Header.Get("Cache-Control"), b)
			}
			if res.StatusCode == 401 {
				if strings.Contains(b, "secret") || (c.method == "HEAD" && b != "") {
					t.Fatalf("the gate leaks file bytes: %q", b)
				}
				if csp := res.Header.Get("Content-Security-Policy"); !strings.HasPrefix(csp, "default-src 'none'; style-src 'sha256-") {
					t.Fatalf("CSP %q", csp)
				}
			}
			if res.Header.Get("Set-Cookie") != "" {
				t.Fatal("no cookie is set without a token or password")
			}
		})
	}
}

// TestGateShareLink: a valid _token lets the visitor in with a cookie and
// redirects to the same URL without it; an invalid one shows the gate.
func TestGateShareLink(t *testing.T) {
	srv, site := protectedServer(t, sites.Protection{Link: true})
	tok := site.Protection.ShareToken()
	cases := []struct {
		name, target string
		tls          bool
		status       int
		location     string
		cookie       string // the Set-Cookie's start
	}{
		{"valid token", "/?_token=" + tok, false, 303, "/", gateCookieName + "="},
		{"other query kept in order", "/docs/?b=2&_token=" + tok + "&a=1", false, 303, "/docs/?b=2&a=1", gateCookieName + "="},
		{"under TLS", "/?_token=" + tok, true, 303, "/", secureGateCookieName + "="},
		{"a path read as a host stays on the site", "//evil.example/?_token=" + tok, false, 303, "/evil.example/", gateCookieName + "="},
		{"invalid token", "/?_token=nope", false, 401, "", ""},
		{"empty token", "/?_token=", false, 401, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest("GET", "http://demo.sites.test"+c.target, nil)
			if c.tls {
				req.TLS = &tls.ConnectionState{}
			}
			rec := httptest.NewRecorder()
			srv.ServeSite(rec, req, "demo")
			res := rec.Result()
			if res.StatusCode != c.status || res.Header.Get("Location") != c.location {
				t.Fatalf("%d to %q", res.StatusCode, res.Header.Get("Location"))
			}
			sc := res.Header.Get("Set-Cookie")
			if !strings.HasPrefix(sc, c.cookie) || (c.cookie == "") != (sc == "") {
				t.Fatalf("Set-Cookie %q", sc)
			}
			if c.status == 401 {
				if b := body(res); !strings.Contains(b, gateBadLink) || !strings.Contains(b, "share link its owner") {
					t.Fatalf("gate page: %q", b)
				}
				return
			}
			for _, attr := range []string{"Path=/", "HttpOnly", "SameSite=Lax", "Max-Age=604800"} {
				if !strings.Contains(sc, "; "+attr) {
					t.Errorf("Set-Cookie lacks %s: %q", attr, sc)
				}
			}
			if strings.Contains(sc, "Domain") || strings.Contains(sc, "Secure") != c.tls {
				t.Errorf("Set-Cookie %q", sc)
			}
			cookie := strings.SplitN(sc, ";", 2)[0]
			if res := get(srv, "GET", "/", map[string]string{"Cookie": cookie}); res.StatusCode != 200 {
				t.Fatalf("with the cookie: %d", res.StatusCode)
			}
		})
	}
	// the link turned off: the same token no longer lets anyone in
	site.Protection = &sites.Protection{PasswordHash: testHash(), Secret: site.Protection.Secret}
	srv.Changing("demo")()
	if res := get(srv, "GET", "/?_token="+tok, nil); res.StatusCode != 401 {
		t.Fatalf("token of a link turned off: %d", res.StatusCode)
	}
}

// postGate posts the gate form from ip, as the gate page does (no
// Origin or Sec-Fetch-Site: curl, or a browser that sends neither).
func postGate(srv *Server, ip, password, next string) *http.Response {
	return postGateWith(srv, ip, password, next, nil)
}

// postGateWith posts the gate form from ip with the headers given.
func postGateWith(srv *Server, ip, password, next string, headers map[string]string) *http.Response {
	form := url.Values{"password": {password}, "next": {next}}
	req := httptest.NewRequest("POST", "http://demo.sites.test"+GatePath, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	req.RemoteAddr = ip + ":1234"
	rec := httptest.NewRecorder()
	srv.ServeSite(rec, req, "demo")
	return rec.Result()
}

// TestGatePassword: the form's answers, and a password change signing
// everyone out.
func TestGatePassword(t *testing.T) {
	srv, site := protectedServer(t, sites.Protection{PasswordHash: testHash()})
	res := postGate(srv, "192.0.2.1", "wrong password", "/docs/")
	if b := body(res); res.StatusCode != 401 || !strings.Contains(b, gateWrongPassword) || !strings.Contains(b, `value="/docs/"`) || res.Header.Get("Set-Cookie") != "" {
		t.Fatalf("wrong password: %d %q", res.StatusCode, b)
	}
	for next, want := range map[string]string{"/docs/?a=1": "/docs/?a=1", "//evil.example/": "/", "https://evil.example/": "/", "/\\evil": "/", "": "/"} {
		res = postGate(srv, "192.0.2.1", testPassword, next)
		if res.StatusCode != 303 || res.Header.Get("Location") != want {
			t.Fatalf("next %q: %d to %q", next, res.StatusCode, res.Header.Get("Location"))
		}
	}
	cookie := strings.SplitN(res.Header.Get("Set-Cookie"), ";", 2)[0]
	if res := get(srv, "GET", "/app.3f2a1b9c.js", map[string]string{"Cookie": cookie}); res.StatusCode != 200 || body(res) != gatedAsset {
		t.Fatalf("asset with the cookie: %d", res.StatusCode)
	}

	// a new password: the cookie no longer lets in
	h, err := sites.HashPassword("another password")
	if err != nil {
		t.Fatal(err)
	}
	site.Protection = &sites.Protection{PasswordHash: h, Secret: site.Protection.Secret}
	srv.Changing("demo")()
	if res := get(srv, "GET", "/", map[string]string{"Cookie": cookie}); res.StatusCode != 401 {
		t.Fatalf("cookie after a password change: %d", res.StatusCode)
	}

	// a link-only site has no password to post; a public one no gate
	site.Protection = &sites.Protection{Link: true, Secret: "s"}
	srv.Changing("demo")()
	if res := postGate(srv, "192.0.2.1", testPassword, "/"); res.StatusCode != 401 || res.Header.Get("Set-Cookie") != "" {
		t.Fatalf("link-only post: %d", res.StatusCode)
	}
	site.Protection = nil
	srv.Changing("demo")()
	if res := postGate(srv, "192.0.2.1", testPassword, "/"); res.StatusCode != 405 {
		t.Fatalf("public site post: %d", res.StatusCode)
	}
	if res := get(srv, "GET", "/?_token=x", nil); res.StatusCode != 200 || res.Header.Get("Set-Cookie") != "" || res.Header.Get("Cache-Control") != "no-cache" {
		t.Fatalf("public site: %d %q", res.StatusCode, res.Header.Get("Set-Cookie"))
	}
}

// TestGateRateLimit: failed attempts are limited per client (IPv6 per
// /64) and site, in a one-minute window from the client's first failure,
// not the clock's minute; a refused attempt answers 429. Only failures
// count: other clients' failures, however many, never refuse a client,
// and a client's right passwords never count against it.
func TestGateRateLimit(t *testing.T) {
	srv, _ := protectedServer(t, sites.Protection{PasswordHash: testHash()})
	now := time.Date(2026, 11, 24, 12, 0, 50, 0, time.UTC)
	srv.now = func() time.Time { return now }
	srv.gateLimit = newGateLimiter(2, 100)
	steps := []struct {
		ip, password string
		status       int
	}{
		{"192.0.2.1", "wrong password", 401}, {"192.0.2.1", "wrong password", 401},
		{"192.0.2.1", "wrong password", 429}, {"192.0.2.1", testPassword, 429}, // per client
		{"2001:db8::1", "wrong password", 401}, {"[2001:db8::2]", "wrong password", 401},
		{"2001:db8::3", "wrong password", 429},  // the /64 counted once
		{"198.51.100.7", "wrong password", 401}, // the site has had 5 failures: still checked
		{"198.51.100.8", testPassword, 303},     // and the right password lets in
		{"203.0.113.5", testPassword, 303}, {"203.0.113.5", testPassword, 303}, {"203.0.113.5", testPassword, 303},
		{"203.0.113.5", "wrong password", 401}, // right passwords did not count
	}
	for i, s := range steps {
		res := postGate(srv, s.ip, s.password, "/")
		if res.StatusCode != s.status {
			t.Fatalf("step %d (%s): %d, want %d", i, s.ip, res.StatusCode, s.status)
		}
		if s.status == 429 && (!strings.Contains(body(res), gateTooMany) || res.Header.Get("Retry-After") != "60") {
			t.Fatalf("step %d: the 429 page", i)
		}
	}
	now = now.Add(20 * time.Second) // the clock's minute has turned, not the windows
	if res := postGate(srv, "192.0.2.1", testPassword, "/"); res.StatusCode != 429 {
		t.Fatalf("past the clock's minute: %d", res.StatusCode)
	}
	now = now.Add(40 * time.Second)
	if res := postGate(srv, "192.0.2.1", testPassword, "/"); res.StatusCode != 303 {
		t.Fatalf("a minute after the first attempt: %d", res.StatusCode)
	}
}

// TestGateSiteFailureCap: past a site's failures in a minute, a client
// that has failed already is refused, while a client with no failure of
// its own still has its try: guesses at a site stay bounded without
// locking a visitor who arrives during an attack out.
func TestGateSiteFailureCap(t *testing.T) {
	srv, _ := protectedServer(t, sites.Protection{PasswordHash: testHash()})
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	srv.now = func() time.Time { return now }
	srv.gateLimit = newGateLimiter(10, 3)
	steps := []struct {
		ip, password string
		status       int
	}{
		{"192.0.2.1", "wrong password", 401}, {"192.0.2.2", "wrong password", 401},
		{"192.0.2.3", "wrong password", 401}, // the site's cap is reached
		{"192.0.2.1", "wrong password", 429}, // a client that failed already
		{"192.0.2.1", testPassword, 429},
		{"192.0.2.4", "wrong password", 401}, // a fresh client: its one try
		{"192.0.2.4", "wrong password", 429},
		{"192.0.2.5", testPassword, 303}, // a visitor with the password gets in
		{"192.0.2.5", testPassword, 303},
	}
	for i, s := range steps {
		if res := postGate(srv, s.ip, s.password, "/"); res.StatusCode != s.status {
			t.Fatalf("step %d (%s): %d, want %d", i, s.ip, res.StatusCode, s.status)
		}
	}
	now = now.Add(time.Minute)
	if res := postGate(srv, "192.0.2.1", testPassword, "/"); res.StatusCode != 303 {
		t.Fatalf("a minute later: %d, want 303", res.StatusCode)
	}
}

// TestGateCrossOrigin: a gate post that a browser sends from another
// origin (Sec-Fetch-Site, else Origin against the Host) is refused with
// 403 before any password check, and counts no attempt; the site's own
// page, and clients that send neither header, get in.
func TestGateCrossOrigin(t *testing.T) {
	srv, _ := protectedServer(t, sites.Protection{PasswordHash: testHash()})
	srv.gateLimit = newGateLimiter(1, 100)
	cases := []struct {
		name    string
		headers map[string]string
		status  int
	}{
		{"another site", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"another site host of the same domain", map[string]string{"Sec-Fetch-Site": "same-site"}, 403},
		{"Origin of another host", map[string]string{"Origin": "http://evil.example"}, 403},
		{"Origin of a sibling site host", map[string]string{"Origin": "http://other.sites.test"}, 403},
		{"opaque Origin", map[string]string{"Origin": "null"}, 403},
		{"the site's own page", map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "http://demo.sites.test"}, 303},
		{"the site's own Origin", map[string]string{"Origin": "http://demo.sites.test"}, 303},
		{"neither header", nil, 303},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ip := "192.0.2." + strconv.Itoa(i+1)
			res := postGateWith(srv, ip, testPassword, "/", c.headers)
			if res.StatusCode != c.status || (res.Header.Get("Set-Cookie") != "") != (c.status == 303) {
				t.Fatalf("right password: %d, Set-Cookie %q", res.StatusCode, res.Header.Get("Set-Cookie"))
			}
			if c.status != 403 {
				return
			}
			if b := body(res); !strings.Contains(b, gateCrossOrigin) || res.Header.Get("Cache-Control") != "no-store" {
				t.Fatalf("403 page: %q, Cache-Control %q", b, res.Header.Get("Cache-Control"))
			}
			for range 3 {
				if res := postGateWith(srv, ip, "wrong password", "/", c.headers); res.StatusCode != 403 {
					t.Fatalf("wrong password: %d", res.StatusCode)
				}
			}
			// the refusals counted no attempt: the limit of 1 is not reached
			if res := postGate(srv, ip, "wrong password", "/"); res.StatusCode != 401 {
				t.Fatalf("a same-origin failure after the refusals: %d", res.StatusCode)
			}
		})
	}
}

// TestGateCookieAndLinkNeverLimited: a visitor with a valid cookie, or
// with the share link, is let in whatever the attempt limits and the
// password checks say: a post with a valid cookie goes on without a
// check.
func TestGateCookieAndLinkNeverLimited(t *testing.T) {
	srv, site := protectedServer(t, sites.Protection{PasswordHash: testHash(), Link: true})
	srv.gateLimit = newGateLimiter(1, 100)
	srv.gateChecks = newPasswordChecksN(1, time.Millisecond)
	if res := postGate(srv, "192.0.2.1", "wrong password", "/"); res.StatusCode != 401 {
		t.Fatalf("first failure: %d", res.StatusCode)
	}
	release, ok := srv.gateChecks.acquire(context.Background(), "another site", 0) // every slot taken
	if !ok {
		t.Fatal("no slot")
	}
	defer release()
	if res := postGate(srv, "192.0.2.1", "wrong password", "/"); res.StatusCode != 429 {
		t.Fatalf("over the client's limit: %d", res.StatusCode)
	}
	if res := postGate(srv, "192.0.2.9", testPassword, "/"); res.StatusCode != 503 {
		t.Fatalf("with every slot taken: %d", res.StatusCode)
	}
	cookie := validCookie(srv, site)
	res := postGateWith(srv, "192.0.2.1", "", "/docs/", map[string]string{"Cookie": cookie})
	if res.StatusCode != 303 || res.Header.Get("Location") != "/docs/" {
		t.Fatalf("post with a valid cookie: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	if res := get(srv, "GET", "/", map[string]string{"Cookie": cookie}); res.StatusCode != 200 {
		t.Fatalf("GET with a valid cookie: %d", res.StatusCode)
	}
	if res := get(srv, "GET", "/?_token="+site.Protection.ShareToken(), nil); res.StatusCode != 303 || res.Header.Get("Set-Cookie") == "" {
		t.Fatalf("share link: %d", res.StatusCode)
	}
}

// TestClientPrefix: what the attempt limits count an address as.
func TestClientPrefix(t *testing.T) {
	for in, want := range map[string]string{
		"192.0.2.1":             "192.0.2.1",
		"192.0.2.1:5555":        "192.0.2.1",
		"::ffff:192.0.2.1":      "192.0.2.1",
		"2001:db8:1:2:3:4:5:6":  "2001:db8:1:2::/64",
		"[2001:db8:1:2::9]:443": "2001:db8:1:2::/64",
		"not an address":        "not an address",
	} {
		if got := clientPrefix(in); got != want {
			t.Errorf("clientPrefix(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestGatePasswordChecksBounded: password checks (a slow hash each) run
// a bounded number at a time across every site; a check that finds no
// slot free within the wait answers 503 with Retry-After and sets no
// cookie, and once a slot is free the same post gets in.
func TestGatePasswordChecksBounded(t *testing.T) {
	srv, _ := protectedServer(t, sites.Protection{PasswordHash: testHash()})
	srv.gateChecks = newPasswordChecksN(1, time.Millisecond)
	release, ok := srv.gateChecks.acquire(context.Background(), "another site", 0) // another site's check, running
	if !ok {
		t.Fatal("no slot for the first check")
	}
	res := postGate(srv, "192.0.2.1", testPassword, "/")
	if b := body(res); res.StatusCode != 503 || res.Header.Get("Retry-After") != "5" || !strings.Contains(b, gateBusy) || res.Header.Get("Set-Cookie") != "" {
		t.Fatalf("with every slot taken: %d, Retry-After %q, %q", res.StatusCode, res.Header.Get("Retry-After"), b)
	}
	release()
	if res := postGate(srv, "192.0.2.1", testPassword, "/"); res.StatusCode != 303 || res.Header.Get("Set-Cookie") == "" {
		t.Fatalf("with a slot free: %d", res.StatusCode)
	}
	if n := srv.gateChecks.running; n != 0 {
		t.Fatalf("%d slots still taken after the checks ended", n)
	}
	if c := newPasswordChecks(); c.slots < 1 || c.perSite < 1 || c.perSite > c.slots {
		t.Fatalf("slots %d, per site %d", c.slots, c.perSite)
	}
}

// TestGateDropsCDNCacheHeaders: a protected site's own _headers cannot
// tell a CDN in front of the server to keep its pages: CDN-Cache-Control,
// Cloudflare-CDN-Cache-Control and Surrogate-Control are dropped from
// every answer a visitor gets through the gate (a public site keeps them).
func TestGateDropsCDNCacheHeaders(t *testing.T) {
	files := map[string][2]string{
		"index.html": {htmlType, gatedPage},
		"_headers": {"text/plain", "/*\n  CDN-Cache-Control: max-age=600\n  Cloudflare-CDN-Cache-Control: max-age=600\n" +
			"  Surrogate-Control: max-age=600\n  X-Kept: yes\n"},
	}
	p := &sites.Protection{PasswordHash: testHash(), Secret: "secret-of-site-a"}
	site := &sites.Site{ID: "site-a", Slug: "demo", Status: sites.StatusActive, Protection: p}
	srv, _ := newTestServer(t, site, files)
	res := get(srv, "GET", "/", map[string]string{"Cookie": validCookie(srv, site)})
	if res.StatusCode != 200 || res.Header.Get("X-Kept") != "yes" {
		t.Fatalf("protected: %d, X-Kept %q", res.StatusCode, res.Header.Get("X-Kept"))
	}
	for _, name := range []string{"CDN-Cache-Control", "Cloudflare-CDN-Cache-Control", "Surrogate-Control"} {
		if v := res.Header.Get(name); v != "" {
			t.Errorf("protected site answered %s: %q", name, v)
		}
	}
	site.Protection = nil
	srv.Changing("demo")()
	if res := get(srv, "GET", "/", nil); res.Header.Get("CDN-Cache-Control") != "max-age=600" {
		t.Fatalf("public site lost its CDN-Cache-Control: %q", res.Header.Get("CDN-Cache-Control"))
	}
}

// queued waits until c has n checks waiting.
func queued(t *testing.T, c *passwordChecks, n int) {
	t.Helper()
	for range 10000 {
		c.mu.Lock()
		got := 0
		for _, sc := range c.sites {
			got += len(sc.waiting)
		}
		c.mu.Unlock()
		if got == n {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("never %d checks waiting", n)
}

// TestPasswordChecksFair: one site holds at most its share of the
// password check slots, and a slot that comes free goes to the site
// served least recently, then within a site to the client with the
// fewest failures: another site's visitor, or a visitor who has not
// failed, goes before a flood queued earlier.
func TestPasswordChecksFair(t *testing.T) {
	ctx := context.Background()
	t.Run("a site's share", func(t *testing.T) {
		c := newPasswordChecksN(2, time.Millisecond)
		relA, ok := c.acquire(ctx, "a", 0)
		if !ok {
			t.Fatal("a: no slot")
		}
		if _, ok := c.acquire(ctx, "a", 0); ok {
			t.Fatal("a took a second slot of two")
		}
		relB, ok := c.acquire(ctx, "b", 0)
		if !ok {
			t.Fatal("b: no slot while a holds its share")
		}
		relA()
		relA() // a second call gives nothing back twice
		relB()
		if c.running != 0 || len(c.sites) != 0 {
			t.Fatalf("%d running, %d sites kept", c.running, len(c.sites))
		}
	})
	type got struct {
		name string
		rel  func()
	}
	order := func(t *testing.T, c *passwordChecks, first func(), waiters []struct {
		site, name string
		failures   int
	}) []string {
		t.Helper()
		out := make(chan got, len(waiters))
		for i, w := range waiters {
			go func() {
				rel, ok := c.acquire(ctx, w.site, w.failures)
				if !ok {
					rel = func() {}
				}
				out <- got{w.name, rel}
			}()
			queued(t, c, i+1) // queued in this order
		}
		first()
		var names []string
		for range waiters {
			g := <-out
			names = append(names, g.name)
			g.rel()
		}
		return names
	}
	t.Run("another site first", func(t *testing.T) {
		c := newPasswordChecksN(1, time.Minute)
		rel, _ := c.acquire(ctx, "a", 0)
		names := order(t, c, rel, []struct {
			site, name string
			failures   int
		}{{"a", "a1", 0}, {"a", "a2", 0}, {"a", "a3", 0}, {"b", "b1", 0}})
		if names[0] != "b1" {
			t.Fatalf("order %v: b's visitor waited behind a's flood", names)
		}
	})
	t.Run("within a site, fewest failures first", func(t *testing.T) {
		c := newPasswordChecksN(1, time.Minute)
		rel, _ := c.acquire(ctx, "a", 0)
		names := order(t, c, rel, []struct {
			site, name string
			failures   int
		}{{"a", "failing", 5}, {"a", "failing again", 5}, {"a", "visitor", 0}})
		if want := "visitor failing failing again"; strings.Join(names, " ") != want {
			t.Fatalf("order %v, want %s", names, want)
		}
	})
}

// TestGateSlowBody: a gate post whose body does not arrive within the
// gate's body timeout is answered 400 instead of holding the connection:
// the form is a few bytes, which a real client sends at once.
func TestGateSlowBody(t *testing.T) {
	srv, _ := protectedServer(t, sites.Protection{PasswordHash: testHash()})
	srv.gateBodyTimeout = 200 * time.Millisecond
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		srv.ServeSite(w, r, "demo")
	}))
	defer ts.Close()
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// 100 bytes announced, 9 sent, then nothing
	_, err = io.WriteString(conn, "POST "+GatePath+" HTTP/1.1\r\nHost: demo.sites.test\r\n"+
		"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\npassword=")
	if err != nil {
		t.Fatal(err)
	}
	// far longer than the timeout: a server that waits for the body runs into it
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled gate body: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusBadRequest {
		t.Fatalf("stalled gate body: %d, want 400", res.StatusCode)
	}
}
