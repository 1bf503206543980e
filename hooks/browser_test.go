package hooks

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tests"
)

// browserEnv is the app served on a loopback port (web host
// localhost:PORT, sites <slug>.localhost:PORT, which Chromium resolves to
// loopback by itself) and one headless Chromium tab driving it. Build one
// with newBrowserEnv; every page test of the dashboard shares it.
type browserEnv struct {
	t   *testing.T
	App *tests.TestApp
	SD  *built
	// WebURL is http://localhost:PORT.
	WebURL string
	Port   int
	// Ctx is the browser tab's chromedp context.
	Ctx context.Context

	jsMu     sync.Mutex
	jsErrors []string

	// Received logs the requests the server received.
	Received *requestLog
}

// requestLog counts the requests a handler received, by method and path.
type requestLog struct {
	mu   sync.Mutex
	seen []string // "METHOD /path"
}

// wrap is h, logging each request first.
func (l *requestLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.seen = append(l.seen, r.Method+" "+r.URL.Path)
		l.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

// Count is how many requests were received whose "METHOD /path" starts
// with prefix.
func (l *requestLog) Count(prefix string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, s := range l.seen {
		if strings.HasPrefix(s, prefix) {
			n++
		}
	}
	return n
}

// browserTimeout bounds one browser test as a whole.
const browserTimeout = 90 * time.Second

// newBrowserEnv starts the fixture app (see newFixtureApp; tune adjusts its
// config) on loopback and a headless Chromium, skipping without Chromium
// outside CI. Uncaught exceptions and console errors of the pages are
// collected; Close (run by t.Cleanup) fails the test when there are any.
func newBrowserEnv(t *testing.T, tune ...func(*Config)) *browserEnv {
	t.Helper()
	chromium := findChromium(t)
	tune = append([]func(*Config){func(c *Config) { c.Domain, c.SitesDomain = "localhost", "localhost" }}, tune...)
	app, sd := newFixtureApp(t, tune...)
	t.Cleanup(app.Cleanup) // runs after the server has closed (cleanups are LIFO)

	received := new(requestLog)
	srv := httptest.NewUnstartedServer(nil)
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	b := &browserEnv{t: t, App: app, SD: sd, Port: port, WebURL: "http://localhost:" + strconv.Itoa(port), Received: received}
	// the configuration is complete before the server is (the serve event
	// hands the routes the addresses they give out), as flags make it
	sd.cfg.PublicURL = b.WebURL
	srv.Config.Handler = received.wrap(newMux(t, app))
	srv.Start()
	t.Cleanup(srv.Close)

	ctx, cancel := context.WithTimeout(t.Context(), browserTimeout)
	t.Cleanup(cancel)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Env("TMPDIR="+chromiumTempDir(t)), // its singleton socket and shared memory files
		chromedp.WindowSize(1280, 1000),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	var logMu sync.Mutex
	logOpen := true
	t.Cleanup(func() { logMu.Lock(); logOpen = false; logMu.Unlock() })
	logf := func(format string, args ...any) {
		logMu.Lock()
		defer logMu.Unlock()
		if logOpen { // chromedp may log from its goroutines: never after the test
			t.Logf("chromedp: "+format, args...)
		}
	}
	bctx, cancelBrowser := chromedp.NewContext(actx, chromedp.WithErrorf(logf))
	t.Cleanup(cancelBrowser)
	b.Ctx = bctx
	if err := chromedp.Listen(bctx, b.collectJSError); err != nil {
		t.Fatalf("start the browser: %v", err)
	}
	t.Cleanup(b.checkJSErrors)
	return b
}

// chromiumTempDir is a directory of the test's for Chromium's TMPDIR,
// whose path is short: Chromium puts its singleton's Unix socket there
// (org.chromium.Chromium.XXXXXX/SingletonSocket), and a socket's path
// has at most 107 bytes. t.TempDir() names the test and sits in the
// user's TMPDIR, which may be long itself (macOS: /var/folders/…/T/):
// Chromium then fails to start. /tmp is used where it exists.
func chromiumTempDir(t *testing.T) string {
	t.Helper()
	base := os.TempDir()
	if st, err := os.Stat("/tmp"); err == nil && st.IsDir() {
		base = "/tmp"
	}
	dir, err := os.MkdirTemp(base, "sdcr")
	if err != nil {
		t.Fatalf("Chromium's temporary directory: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if n := len(dir) + len("/org.chromium.Chromium.XXXXXX/SingletonSocket"); n > 107 {
		t.Fatalf("Chromium's temporary directory %s is too long for its socket (%d bytes)", dir, n)
	}
	return dir
}

// collectJSError keeps uncaught exceptions and console.error calls.
func (b *browserEnv) collectJSError(ev any) {
	var msg string
	switch ev := ev.(type) {
	case *runtime.EventExceptionThrown:
		msg = strings.TrimPrefix(ev.ExceptionDetails.URL+": ", ": ") + ev.ExceptionDetails.Text
		if ex := ev.ExceptionDetails.Exception; ex != nil && ex.Description != "" {
			msg += " " + ex.Description
		}
	case *runtime.EventConsoleAPICalled:
		if ev.Type != runtime.ConsoleAPICalledTypeError {
			return
		}
		msg = "console.error:"
		for _, a := range ev.Args {
			if a.Description != "" {
				msg += " " + a.Description
			} else {
				msg += " " + string(a.Value)
			}
		}
	default:
		return
	}
	b.jsMu.Lock()
	b.jsErrors = append(b.jsErrors, msg)
	b.jsMu.Unlock()
}

// checkJSErrors fails the test on any JavaScript error seen in the pages.
func (b *browserEnv) checkJSErrors() {
	b.jsMu.Lock()
	defer b.jsMu.Unlock()
	if len(b.jsErrors) != 0 {
		b.t.Errorf("JavaScript errors in the pages:\n%s", strings.Join(b.jsErrors, "\n"))
	}
}

// SiteURL is the live URL of slug on the loopback server.
func (b *browserEnv) SiteURL(slug string) string {
	return "http://" + slug + ".localhost:" + strconv.Itoa(b.Port) + "/"
}

// SignIn gives the browser a session of user (who needs an API key, as
// mustUser makes), as signing in by e-mail code would.
func (b *browserEnv) SignIn(user *core.Record) {
	b.t.Helper()
	token := "browser-session-" + user.Id
	mustSession(b.t, b.App, user, token)
	httpOnly := true
	if _, err := chromedp.Call(b.Ctx, network.SetCookie, network.SetCookieParams{
		Name: "sitedrop_session", Value: token, URL: b.WebURL + "/",
		Path: "/", HTTPOnly: &httpOnly, SameSite: network.CookieSameSiteLax,
	}); err != nil {
		b.Fail("set the session cookie", err)
	}
}

// Fail stops the test after a browser step went wrong, with where the
// browser is, what it shows and a screenshot (kept with go test -artifacts
// -outputdir DIR).
func (b *browserEnv) Fail(what string, err error) {
	b.t.Helper()
	loc, _ := chromedp.Run(b.Ctx, chromedp.Location())
	if png, serr := chromedp.Run(b.Ctx, chromedp.FullScreenshot(100)); serr == nil {
		p := filepath.Join(b.t.ArtifactDir(), "failure.png")
		if os.WriteFile(p, png, 0o644) == nil {
			b.t.Logf("screenshot of the failure: %s", p)
		}
	}
	body, _ := chromedp.Run(b.Ctx, chromedp.Text(chromedp.CSS("body")))
	b.t.Fatalf("%s: %v\nbrowser at %s showing:\n%s", what, err, loc, body)
}

// Step runs actions in the tab, failing the test (see Fail) on an error.
func (b *browserEnv) Step(name string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.Ctx, actions...); err != nil {
		b.Fail(name, err)
	}
}

// Text is the visible text of the first element sel matches.
func (b *browserEnv) Text(sel chromedp.CSS) string {
	b.t.Helper()
	s, err := chromedp.Run(b.Ctx, chromedp.Text(sel))
	if err != nil {
		b.Fail("read "+string(sel), err)
	}
	return s
}

// Count is how many elements sel matches now (0 is fine).
func (b *browserEnv) Count(sel string) int {
	b.t.Helper()
	n, err := chromedp.Run(b.Ctx, chromedp.Evaluate[int](`document.querySelectorAll(`+strconv.Quote(sel)+`).length`))
	if err != nil {
		b.Fail("count "+sel, err)
	}
	return n
}

// Location is the tab's URL.
func (b *browserEnv) Location() string {
	b.t.Helper()
	loc, err := chromedp.Run(b.Ctx, chromedp.Location())
	if err != nil {
		b.Fail("location", err)
	}
	return loc
}

// Loaded waits until the page and its deferred scripts have run, after a
// navigation that a click started (Navigate waits by itself). Put it after
// a wait for something only the new page has: run straight after the
// click it can poll the old page, whose context the navigation destroys
// mid-call ("Cannot find context with specified id").
var Loaded = chromedp.Poll[chromedp.Void](`document.readyState === "complete"`,
	chromedp.WithPollingInterval(20*time.Millisecond))

// TestBrowserEnvSignIn checks the harness itself: a signed-in browser sees
// its account page with its address.
func TestBrowserEnvSignIn(t *testing.T) {
	b := newBrowserEnv(t)
	user := mustUser(t, b.App, "harness@example.com", "free", fixtureKey("harness"))
	b.SignIn(user)
	b.Step("open the account page", chromedp.Navigate(b.WebURL+"/account"), chromedp.WaitVisible(testid("slots")))
	if s := b.Text(chromedp.CSS("main")); !strings.Contains(s, "harness@example.com") {
		t.Fatalf("account page does not show the address:\n%s", s)
	}
}
