package hooks

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"sitedrop/sites"
	"sitedrop/sites/accounts"
)

// findChromium returns the path of a Chromium or Chrome binary. Without one
// the test is skipped, except in CI (CI=true), where it must run.
func findChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	const msg = "no chromium, chromium-browser or google-chrome on PATH; install Debian's chromium (apt-get install chromium) to run the browser test"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg + " (CI=true: the browser test must run in CI)")
	}
	t.Skip(msg)
	return ""
}

// testid is the CSS selector of an element by its data-testid.
func testid(id string) chromedp.CSS {
	return chromedp.CSS(`[data-testid="` + id + `"]`)
}

// TestBrowserClaimE2E drives a real browser through the whole anonymous
// deploy → claim → sign in by e-mail code → account flow against the app
// served on a loopback port, with the code mailed over real SMTP.
func TestBrowserClaimE2E(t *testing.T) {
	start := time.Now()
	phase := func(name string) { t.Logf("%-28s %v", name, time.Since(start).Round(time.Millisecond)) }

	rcv := newSMTPReceiver(t)
	// The web host is localhost:PORT and sites are <slug>.localhost:PORT.
	b := newBrowserEnv(t)
	app, webURL, port := b.App, b.WebURL, b.Port
	useRealSMTP(t, app, rcv)
	phase("app serving, browser ready")

	ctx := b.Ctx
	// (a) an anonymous deploy, as curl would do it
	dep := e2eDeploy(t, ctx, webURL, `{"html":"<h1>E2E</h1>","title":"E2E site"}`)
	siteURL := "http://" + dep.Slug + ".localhost:" + strconv.Itoa(port) + "/"
	if !strings.HasPrefix(dep.ClaimURL, webURL+"/claim/"+dep.Slug+"?token=") || dep.URL != siteURL {
		t.Fatalf("deploy answer: claim_url %q url %q (web %s)", dep.ClaimURL, dep.URL, webURL)
	}
	phase("anonymous deploy")

	bctx, shots := b.Ctx, t.ArtifactDir()
	browserFail, step, text, location, loaded := b.Fail, b.Step, b.Text, b.Location, Loaded

	// (b) the claim link, signed out: the site and a way to sign in
	step("open the claim link",
		chromedp.Navigate(dep.ClaimURL),
		chromedp.WaitVisible(testid("claim-signin")),
	)
	phase("browser on claim page")
	if h := text(chromedp.CSS("main h1")); h != "E2E site" {
		t.Fatalf("claim page heading %q, want the site title", h)
	}
	if s := text(testid("site-link")); s != siteURL {
		t.Fatalf("claim page site link %q, want %s", s, siteURL)
	}
	if n, err := chromedp.Run(bctx, chromedp.Nodes(testid("claim-button"), chromedp.AtLeast(0))); err != nil || len(n) != 0 {
		t.Fatalf("signed out, the claim page shows %d claim buttons (%v)", len(n), err)
	}
	step("follow the sign-in link",
		chromedp.Click(testid("claim-signin")),
		chromedp.WaitVisible(testid("email-input")),
		loaded, // login.js is in charge of the forms from now on
	)
	if loc, want := location(), webURL+"/auth/login?next="+url.QueryEscape("/claim/"+dep.Slug+"?token="+url.QueryEscape(dep.ClaimToken)); loc != want {
		t.Fatalf("sign-in link went to %s, want %s", loc, want)
	}

	// (c) sign in with a new address and the code from the mail
	const email = "e2e.claimer@example.com"
	step("ask for a code",
		chromedp.SendKeys(testid("email-input"), email),
		chromedp.Click(testid("send-code")),
		chromedp.WaitVisible(testid("code-input")),
	)
	phase("code requested")
	_, code := loginCodeFrom(t, rcv, email)
	phase("code received over SMTP")
	step("enter the code",
		chromedp.SendKeys(testid("code-input"), code),
		chromedp.Click(testid("verify-code")),
		// (d) back on the claim page (next=), signed in now
		chromedp.WaitVisible(testid("claim-button")),
	)
	phase("signed in, back on claim")
	if loc := location(); loc != dep.ClaimURL {
		t.Fatalf("after sign-in the browser is at %s, want the claim page %s", loc, dep.ClaimURL)
	}
	step("claim the site",
		chromedp.Click(testid("claim-button")),
		chromedp.WaitVisible(testid("flash-success")), // on the site's page (POST → 303 → GET)
	)
	if s := text(testid("flash-success")); !strings.Contains(s, "E2E site") {
		t.Fatalf("claim confirmation %q does not name the site", s)
	}
	phase("claimed")

	// (e) the account page lists the site and counts the slot
	step("open the account page",
		chromedp.Navigate(webURL+"/account"),
		chromedp.WaitVisible(testid("deployment-row")),
	)
	rows, err := chromedp.Run(bctx, chromedp.Nodes(chromedp.CSSAll(`[data-testid="deployment-row"]`)))
	if err != nil {
		browserFail("deployment rows", err)
	}
	if len(rows) != 1 {
		t.Fatalf("account page lists %d sites, want 1", len(rows))
	}
	if s := text(testid("deployment-row")); !strings.Contains(s, dep.Slug) || !strings.Contains(s, "E2E site") {
		t.Fatalf("deployment row %q, want slug %s and the title", s, dep.Slug)
	}
	if s := text(testid("slots")); !strings.Contains(s, "1 of 5") {
		t.Fatalf("slots %q, want 1 of 5", s)
	}
	if s := text(chromedp.CSS("main")); !strings.Contains(s, email) {
		t.Fatalf("account page does not show %s:\n%s", email, s)
	}
	png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	if err != nil {
		browserFail("screenshot", err)
	}
	shot := filepath.Join(shots, "account.png")
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	phase("account page checked")

	// (f) the site itself, on its own host
	step("open the site", chromedp.Navigate(siteURL), chromedp.WaitVisible(chromedp.CSS("h1")))
	if title, err := chromedp.Run(bctx, chromedp.Title()); err != nil || title != "E2E site" {
		t.Fatalf("site title %q (%v), want E2E site", title, err)
	}
	if h := text(chromedp.CSS("h1")); h != "E2E" {
		t.Fatalf("site heading %q", h)
	}
	phase("site served")

	// the server side: the new user owns the site, which no longer expires
	user, err := app.FindAuthRecordByEmail(accounts.UsersCollection, email)
	if err != nil {
		t.Fatalf("the new user does not exist: %v", err)
	}
	rec, err := app.FindFirstRecordByData(sites.DeploymentsCollection, "slug", dep.Slug)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Id != dep.ID || rec.GetString("owner") != user.Id {
		t.Fatalf("deployment %s owner %q, want %s (%s)", rec.Id, rec.GetString("owner"), user.Id, email)
	}
	if !rec.GetDateTime("expires_at").IsZero() {
		t.Fatalf("claimed deployment still expires at %v", rec.GetDateTime("expires_at"))
	}
	if n := len(rcv.Mails()); n != 1 {
		t.Fatalf("%d mails sent, want 1", n)
	}
	if errs := rcv.Errors(); len(errs) != 0 {
		t.Fatalf("SMTP protocol errors: %v", errs)
	}
}

// e2eDeployAnswer is the part of an anonymous deploy's answer the test uses.
type e2eDeployAnswer struct {
	ID         string `json:"id"`
	Slug       string `json:"slug"`
	URL        string `json:"url"`
	ClaimToken string `json:"claim_token"`
	ClaimURL   string `json:"claim_url"`
}

// e2eDeploy POSTs an anonymous deploy to the running server.
func e2eDeploy(t *testing.T, ctx context.Context, webURL, body string) e2eDeployAnswer {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, webURL+"/deploy", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	// no proxy from the environment: the server is on loopback
	client := &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: 20 * time.Second}
	defer client.CloseIdleConnections()
	res, err := client.Do(req)
	if err != nil {
		t.Fatalf("deploy: %v", err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("deploy: %d %s", res.StatusCode, b)
	}
	var out e2eDeployAnswer
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("deploy answer %q: %v", b, err)
	}
	if out.Slug == "" || out.ClaimURL == "" || out.ClaimToken == "" || out.ID == "" {
		t.Fatalf("deploy answer %s", b)
	}
	return out
}
