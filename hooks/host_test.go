package hooks

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tests"
	"github.com/pocketbase/pocketbase/tools/hook"
)

// TestServerHandlerWrapper checks the production split: site hosts are
// answered by the site server and never reach the wrapped handler.
func TestServerHandlerWrapper(t *testing.T) {
	t.Parallel()
	app, sd := newFixtureApp(t)
	defer app.Cleanup()
	reached := 0
	se := &core.ServeEvent{App: app, Server: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached++
		io.WriteString(w, "pocketbase")
	})}}
	se.Server.Handler = sd.front().Wrap(se.Server.Handler)

	for _, c := range []struct {
		host, path string
		status     int
		body       string
		reachesPB  bool
	}{
		{"alice-site.sites.test", "/", 200, "<h1>alice</h1>", false},
		{"alice-site.sites.test:8090", "/_/", 404, "Page not found", false},
		{"x.alice-site.sites.test", "/api/health", 404, "Site not found", false},
		{"nope.sites.test", "/deploys", 404, "Site not found", false},
		{"web.test", "/api/health", 200, "pocketbase", true},
		{"127.0.0.1:8090", "/", 200, "pocketbase", true},
		{"", "/api/health", 200, "pocketbase", true},   // HTTP/1.0 without Host
		{"www.web.test", "/", 200, "pocketbase", true}, // PocketBase's router redirects it
		// Hosts the server does not serve: never the web host's pages.
		{"evil.example", "/auth/login", 421, `{"error":"unknown host"}`, false},
		{"EVIL.example:8090", "/_/", 421, `{"error":"unknown host"}`, false},
		{"sites.test", "/", 421, `{"error":"unknown host"}`, false},
		{"evil.example", "/api/health", 200, "pocketbase", true}, // probes send any host
		// Malformed hosts: refused before both sides.
		{"alice-site.sites.test:8090:80", "/api/health", 400, "Invalid Host header", false},
		{"[alice-site.sites.test]", "/_/", 400, "Invalid Host header", false},
		{"alice-site.sites.test.", "/", 400, "Invalid Host header", false},
		{"web.test.", "/api/health", 400, "Invalid Host header", false},
		{"alice-site..sites.test", "/deploys", 400, "Invalid Host header", false},
		{"web.test:", "/api/health", 400, "Invalid Host header", false},
	} {
		before := reached
		req := httptest.NewRequest(http.MethodGet, "http://placeholder"+c.path, nil)
		req.Host = c.host
		rec := httptest.NewRecorder()
		se.Server.Handler.ServeHTTP(rec, req)
		if rec.Code != c.status || !strings.Contains(rec.Body.String(), c.body) || (reached > before) != c.reachesPB {
			t.Errorf("%s%s: %d %q, reached PocketBase: %v", c.host, c.path, rec.Code, rec.Body.String(), reached > before)
		}
		if c.status == 404 && rec.Header().Get("Content-Type") != "text/html; charset=utf-8" {
			t.Errorf("%s%s: a 404 for a browser is %q, not an HTML page", c.host, c.path, rec.Header().Get("Content-Type"))
		}
	}
}

// TestWebHostUnderSitesDomain: with --domain web.sites.test and
// --sites-domain sites.test the web host still serves the API, and no
// site can take the name "web".
func TestWebHostUnderSitesDomain(t *testing.T) {
	t.Parallel()
	factory := func(t testing.TB) *tests.TestApp {
		app, _ := newBareApp(t, func(c *Config) { c.Domain = "web.sites.test" })
		return app
	}
	runScenarios(t, []tests.ApiScenario{
		{
			Name:            "the web host answers the API",
			Method:          http.MethodPost,
			URL:             "http://web.sites.test/deploy",
			Body:            strings.NewReader(`{"html":"x","slug":"neighbour"}`),
			ExpectedStatus:  200,
			ExpectedContent: []string{`"url":"http://neighbour.sites.test/"`, `"claim_url":"http://web.sites.test/claim/neighbour?token=`},
			TestAppFactory:  factory,
		},
		{
			Name:            "the web host's label is reserved",
			Method:          http.MethodPost,
			URL:             "http://web.sites.test/deploy",
			Body:            strings.NewReader(`{"html":"x","slug":"web"}`),
			ExpectedStatus:  409,
			ExpectedContent: []string{errBody(msgSlugReserved)},
			TestAppFactory:  factory,
		},
	})
}

// withHost makes a scenario's request carry host, which its URL cannot
// (net/url refuses some malformed hosts): a middleware that runs before
// all others sets it.
func withHost(host string) func(testing.TB, *tests.TestApp, *core.ServeEvent) {
	return func(_ testing.TB, _ *tests.TestApp, se *core.ServeEvent) {
		se.Router.Bind(&hook.Handler[*core.RequestEvent]{
			Id:       "testHost",
			Priority: siteHostPriority - 1,
			Func: func(e *core.RequestEvent) error {
				e.Request.Host = host
				return e.Next()
			},
		})
	}
}

// TestMalformedHostRefused: a Host that is no DNS name, IP address or
// bracketed IPv6 literal (with an optional port) gets a 400 before the API,
// the admin UI or a site sees it.
func TestMalformedHostRefused(t *testing.T) {
	t.Parallel()
	var scenarios []tests.ApiScenario
	for _, c := range []struct{ host, url string }{
		{"alice-site.sites.test:8090:80", "/api/health"},
		{"[alice-site.sites.test]", "/_/"},
		{"[alice-site.sites.test]:80", "/"},
		{"alice-site.sites.test.", "/api/health"},
		{"web.test.", "/_/"},
		{"web.test..", "/deploy"},
		{"alice-site..sites.test", "/api/health"},
		{".sites.test", "/api/health"},
		{"web.test:8090:80", "/api/collections/users/records"},
		{"web.test:", "/api/health"},
		{"web test", "/api/health"},
	} {
		scenarios = append(scenarios, tests.ApiScenario{
			Name:               fmt.Sprintf("Host %q %s", c.host, c.url),
			Method:             http.MethodGet,
			URL:                "http://web.test" + c.url,
			BeforeTestFunc:     withHost(c.host),
			ExpectedStatus:     400,
			ExpectedContent:    []string{"Invalid Host header"},
			NotExpectedContent: []string{"alice", "PocketBase", `"code"`},
			TestAppFactory:     newTestApp,
		})
	}
	scenarios = append(scenarios,
		tests.ApiScenario{
			Name:            "a well-formed web host is served",
			Method:          http.MethodGet,
			URL:             "http://web.test:8090/api/health",
			ExpectedStatus:  200,
			ExpectedContent: []string{`"code":200`},
			TestAppFactory:  newTestApp,
		},
		tests.ApiScenario{
			Name:            "a well-formed site host is served",
			Method:          http.MethodGet,
			URL:             "http://ALICE-SITE.sites.test:8090/",
			ExpectedStatus:  200,
			ExpectedContent: []string{"alice"},
			TestAppFactory:  func(t testing.TB) *tests.TestApp { app, _ := newFixtureApp(t); return app },
		},
	)
	runScenarios(t, scenarios)
}

// TestWWWRedirectsWithSitesOnTheWebHost: with the sites domain equal to
// the web host (the default) or above it, www.<web host> redirects to the
// web URL; it is not taken as a slug.
func TestWWWRedirectsWithSitesOnTheWebHost(t *testing.T) {
	t.Parallel()
	var scenarios []tests.ApiScenario
	for _, c := range []struct{ domain, sitesDomain string }{
		{"web.test", "web.test"},
		{"web.sites.test", "sites.test"},
		{"web.test", "sites.test"},
	} {
		factory := func(t testing.TB) *tests.TestApp {
			app, _ := newBareApp(t, func(cfg *Config) { cfg.Domain, cfg.SitesDomain = c.domain, c.sitesDomain })
			return app
		}
		scenarios = append(scenarios, tests.ApiScenario{
			Name:           fmt.Sprintf("www.%s with sites under %s", c.domain, c.sitesDomain),
			Method:         http.MethodGet,
			URL:            "http://www." + c.domain + ":8090/auth/login?x=1",
			ExpectedStatus: http.StatusPermanentRedirect,
			TestAppFactory: factory,
			AfterTestFunc: func(t testing.TB, _ *tests.TestApp, res *http.Response) {
				if got, want := res.Header.Get("Location"), "http://"+c.domain+"/auth/login?x=1"; got != want {
					t.Errorf("Location = %q, want %q", got, want)
				}
			},
		})
	}
	runScenarios(t, scenarios)
}

// TestUnknownHostRefused: a Host that is neither the web host, www.<web
// host>, a site host nor a custom domain (a released domain still pointing
// here included) gets 421 {"error": "unknown host"} from the listeners'
// handler, never the web host's pages, sign-in or dashboard. What counts
// as the web host: --domain, the host of --public-url, localhost, the
// listen address's host and any IP address (which names this machine, not
// a domain).
func TestUnknownHostRefused(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		tune  func(*Config)
		hosts map[string]bool // host -> served (reaches PocketBase or a site)
	}{
		{"the default: --domain localhost", func(c *Config) { c.Domain, c.SitesDomain = "localhost", "localhost" }, map[string]bool{
			"localhost:8090":       true,
			"127.0.0.1:8090":       true,
			"[::1]:8090":           true,
			"192.168.1.20:8090":    true, // the machine's own address on a LAN
			"devbox:8090":          true, // the listen address's name
			"alice-site.localhost": true,
			"web.test":             false,
			"evil.example:8090":    false,
			"localhost.evil.test":  false,
		}},
		{"--domain web.test --sites-domain sites.test", nil, map[string]bool{
			"web.test":              true,
			"www.web.test":          true,
			"alice-site.sites.test": true,
			"shop.custom.test":      true, // verified
			"pending.custom.test":   true, // answered "not verified yet"
			"released.custom.test":  false,
			"10.0.0.1":              true,
			"localhost:8090":        true,
			"deploy.example.com":    false,
			"sites.test":            false,
			"www.sites.test":        true, // a site host: the site server's 404
			"web.test.evil.example": false,
		}},
		{"behind a proxy: --public-url https://deploy.example.com", func(c *Config) { c.PublicURL = " https://deploy.example.com/ " }, map[string]bool{
			"deploy.example.com":     true,
			"DEPLOY.example.com:443": true,
			"web.test":               true,
			"example.com":            false,
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var tune []func(*Config)
			if c.tune != nil {
				tune = append(tune, c.tune)
			}
			app, sd := newFixtureApp(t, tune...)
			defer app.Cleanup()
			mustDomain(t, app, idAliceSite, "shop.custom.test", true)
			mustDomain(t, app, idAliceSite, "pending.custom.test", false)
			released := mustDomain(t, app, idAliceSite, "released.custom.test", true)
			if err := app.Delete(released); err != nil {
				t.Fatal(err)
			}
			se := &core.ServeEvent{App: app, Router: nil, Server: &http.Server{Addr: "devbox:8090", Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, "pocketbase")
			})}}
			sd.cfg.learnListenPort(se)
			se.Server.Handler = sd.front().Wrap(se.Server.Handler)
			for host, served := range c.hosts {
				for _, path := range []string{"/", "/auth/login", "/_/"} {
					req := httptest.NewRequest(http.MethodGet, "http://placeholder"+path, nil)
					req.Host = host
					rec := httptest.NewRecorder()
					se.Server.Handler.ServeHTTP(rec, req)
					refused := rec.Code == http.StatusMisdirectedRequest
					if refused == served {
						t.Errorf("%s%s: %d %q, want served %v", host, path, rec.Code, rec.Body.String(), served)
					}
					if refused && (rec.Body.String() != `{"error":"unknown host"}`+"\n" ||
						rec.Header().Get("Content-Type") != "application/json" || rec.Header().Get("Cache-Control") != "no-store") {
						t.Errorf("%s%s: refused with %q %q", host, path, rec.Header(), rec.Body.String())
					}
				}
			}
		})
	}
}

// TestUnknownHostOnTheListener: a real server refuses an unknown host on
// its listener, and still serves the web host by name and by address.
func TestUnknownHostOnTheListener(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	addr := loopback(freePort(t))
	startServe(t, copyData(t, templates.fixtures(t)), nil, addr, "--http", addr)
	client := pinnedClient(addr, nil)
	for _, c := range []struct {
		url    string
		status int
		body   string
	}{
		{"http://evil.example/auth/login", 421, `{"error":"unknown host"}`},
		{"http://evil.example/_/", 421, `{"error":"unknown host"}`},
		{"http://sites.test/", 421, `{"error":"unknown host"}`},
		{"http://evil.example/api/health", 200, `"code":200`},
		{"http://web.test/auth/login", 200, "<form"},
		{"http://" + addr + "/auth/login", 200, "<form"},
		{"http://alice-site.sites.test/", 200, "alice"},
	} {
		status, _, body := get(t, client, c.url)
		if status != c.status || !strings.Contains(body, c.body) {
			t.Errorf("GET %s = %d %q, want %d with %q", c.url, status, body, c.status, c.body)
		}
	}
}
