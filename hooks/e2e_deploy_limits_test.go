package hooks

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"sitedrop/sites"
	"sitedrop/ui"
)

// dropError waits for the drop zone's alert and returns it.
func (b *browserEnv) dropError() string {
	b.t.Helper()
	b.Step("wait for the refusal", chromedp.Poll[chromedp.Void](
		`!document.querySelector('[data-testid=drop-error]').hidden || !document.querySelector('[data-testid=drop-result]').hidden`))
	if b.Count(`[data-testid=drop-error]:not([hidden])`) == 0 {
		b.t.Fatalf("deployed, want a refusal: %s", b.Text(testid("drop-status")))
	}
	return b.Text(testid("drop-error"))
}

// TestBrowserDropDeployRefusals: the page refuses more files than
// --max-files before sending anything, and shows the API's own error (a
// full plan) in its alert.
func TestBrowserDropDeployRefusals(t *testing.T) {
	b := newBrowserEnv(t, func(c *Config) { c.FreeSlots = 1 })
	user := mustUser(t, b.App, "full@example.com", "free", fixtureKey("full"))
	b.SignIn(user)

	many := map[string]string{}
	for i := range 11 { // the fixture's --max-files is 10
		many[fmt.Sprintf("p%02d.html", i)] = "x"
	}
	b.Step("choose a folder of 11 files", chromedp.Navigate(b.WebURL+"/account"), chromedp.WaitVisible(testid("drop-target")),
		chromedp.SetUploadFiles(testid("drop-folder"), []string{writeTree(t, many)}))
	if msg := b.dropError(); !strings.Contains(msg, "Too many files: 11, this server takes at most 10") {
		t.Fatalf("alert %q", msg)
	}
	if n := b.Received.Count("POST /blobs/") + b.Received.Count("PUT /blobs/") + b.Received.Count("POST /deploy"); n != 0 {
		t.Fatalf("%d API requests for a refused folder, want none", n)
	}

	// the plan full: refused before anything is hashed or sent, on the
	// count GET /deploys gives now (the page was loaded before the site
	// that fills the plan was made elsewhere)
	b.Step("open the account page", chromedp.Navigate(b.WebURL+"/account"), chromedp.WaitVisible(testid("drop-target")))
	mustDeploy(t, b.SD, user, "fullsite0000001", "full-site", "<h1>one</h1>", "")
	b.Step("choose a folder with the plan full", chromedp.SetUploadFiles(testid("drop-folder"), []string{writeTree(t, map[string]string{"index.html": "<h1>two</h1>"})}))
	want := "Your plan's 1 site is all in use (1 of 1): delete a site, or deploy again to one of yours from its page. Nothing was uploaded."
	if msg := b.dropError(); msg != want {
		t.Fatalf("alert %q, want %q", msg, want)
	}
	if n := b.Received.Count("POST /blobs/") + b.Received.Count("PUT /blobs/") + b.Received.Count("POST /deploy"); n != 0 {
		t.Fatalf("%d uploads or deploys with the plan full, want none: refused before", n)
	}
	if n := b.Received.Count("GET /deploys"); n != 1 {
		t.Fatalf("%d GET /deploys, want the one count of the sites", n)
	}
	if n := b.Count(`[role=alert][data-testid=drop-error]`); n != 1 {
		t.Fatal("the error is not in a role=alert area")
	}
	if b.Count(`[data-drop][data-state=error]`) != 1 {
		t.Fatal("the zone does not say the drop was refused")
	}
	// the server still decides: a deploy sent anyway gets its 403
	req, _ := http.NewRequest(http.MethodPost, b.WebURL+"/deploy", strings.NewReader(`{"html":"<h1>two</h1>"}`))
	req.Header.Set("Authorization", "Bearer "+fixtureKey("full"))
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden || !strings.Contains(string(body), msgSlotLimit) {
		t.Fatalf("a deploy past the plan: %d %s", res.StatusCode, body)
	}
}

// TestBrowserDropDeployInsecureContext: without crypto.subtle (plain http
// away from localhost) a signed-in drop sends the bytes inline and still
// deploys to the account.
func TestBrowserDropDeployInsecureContext(t *testing.T) {
	b := newBrowserEnv(t)
	user := mustUser(t, b.App, "plain@example.com", "free", fixtureKey("plain"))
	b.SignIn(user)
	if _, err := chromedp.Call(b.Ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
		Source: `Object.defineProperty(window.crypto, "subtle", {value: undefined});`,
	}); err != nil {
		b.Fail("hide crypto.subtle", err)
	}
	b.Step("choose a folder", chromedp.Navigate(b.WebURL+"/account"), chromedp.WaitVisible(testid("drop-target")),
		chromedp.SetUploadFiles(testid("drop-folder"), []string{writeTree(t, map[string]string{"index.html": "<h1>inline</h1>", "img/x.png": "\x89PNG\x00\xff"})}))
	live := b.dropWait()
	if n := b.Received.Count("PUT /blobs/") + b.Received.Count("POST /blobs/"); n != 0 {
		t.Fatalf("%d blob requests, want the bytes inline", n)
	}
	if code, body := b.liveFile(live, "/img/x.png"); code != 200 || body != "\x89PNG\x00\xff" {
		t.Fatalf("binary file sent inline: %d %q", code, body)
	}
	if _, err := b.App.FindFirstRecordByData("deployments", "owner", user.Id); err != nil {
		t.Fatalf("the inline deploy does not belong to the account: %v", err)
	}
	if s := b.Text(testid("drop-status")); !strings.Contains(s, "not a secure context") {
		t.Fatalf("status %q does not say why every file was sent", s)
	}
}

// TestDeployJSMissingPhrase: the drop zone recognises the server's
// "content missing" refusal by the phrase the server builds it around.
func TestDeployJSMissingPhrase(t *testing.T) {
	src, err := ui.Assets.ReadFile("assets/deploy.js")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), `var MISSING_PHRASE = "`+sites.ContentMissingPhrase+`"`) {
		t.Fatalf("deploy.js does not look for %q", sites.ContentMissingPhrase)
	}
}
