package hooks

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// axe-core (https://github.com/dequelabs/axe-core) checks the pages in the
// states Lighthouse cannot reach: a drop's result, alerts and flashes,
// dark mode. .ci/axe.sh installs a pinned axe-core from the npm registry
// and .ci/run passes the path of its axe.min.js in SITEDROP_AXE_JS.

// axeEnv names the file the browser tests load axe-core from.
const axeEnv = "SITEDROP_AXE_JS"

// axeTags are the rule sets every checked page passes: WCAG 2.0 and 2.1,
// levels A and AA (color-contrast among them).
var axeTags = []string{"wcag2a", "wcag2aa", "wcag21a", "wcag21aa"}

// axeSource is axe-core's script, from SITEDROP_AXE_JS, else from where
// .ci/axe.sh installs it in the user's cache directory. Without it the
// test skips, saying how to get it, except in CI (CI=true), where the
// check must run.
func axeSource(t *testing.T) string {
	t.Helper()
	path := os.Getenv(axeEnv)
	if cache, err := os.UserCacheDir(); path == "" && err == nil {
		p := filepath.Join(cache, "sitedrop-axe", "node_modules", "axe-core", "axe.min.js")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			path = p
		}
	}
	var msg string
	if path == "" {
		msg = axeEnv + " is not set and axe-core is not in the cache; run: bash .ci/axe.sh (installs it from the npm registry)"
	} else if src, err := os.ReadFile(path); err != nil {
		msg = fmt.Sprintf("read axe-core from %s=%s: %v; run: bash .ci/axe.sh", axeEnv, path, err)
	} else if !strings.Contains(string(src), "axe") {
		msg = fmt.Sprintf("%s=%s is not axe-core's axe.min.js", axeEnv, path)
	} else {
		return string(src)
	}
	if os.Getenv("CI") == "true" {
		t.Fatal(msg + " (CI=true: the accessibility checks must run in CI)")
	}
	t.Skip(msg)
	return ""
}

// axeViolation is the part of an axe-core result the failure shows.
type axeViolation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  []struct {
		Target         []any  `json:"target"`
		HTML           string `json:"html"`
		FailureSummary string `json:"failureSummary"`
	} `json:"nodes"`
}

// Axe runs axe-core (src, from axeSource) on the page the tab shows now and
// fails the test, naming state, on any violation of the WCAG 2.x A and AA
// rules. It checks what is rendered: hidden elements are not checked, so
// bring a state about (a drop, a refused form) before calling it.
func (b *browserEnv) Axe(src, state string) {
	b.t.Helper()
	loaded, err := chromedp.Run(b.Ctx, chromedp.Evaluate[bool](`typeof window.axe === "object"`))
	if err == nil && !loaded {
		_, err = chromedp.Run(b.Ctx, chromedp.Evaluate[chromedp.Void](src))
	}
	if err != nil {
		b.Fail("load axe-core into "+state, err)
	}
	tags, _ := json.Marshal(axeTags)
	res, err := chromedp.Run(b.Ctx, chromedp.Evaluate[[]axeViolation](
		`axe.run(document, {runOnly: {type: "tag", values: `+string(tags)+`}, resultTypes: ["violations"]}).then(r => r.violations)`,
		chromedp.EvalAwaitPromise))
	if err != nil {
		b.Fail("run axe-core on "+state, err)
	}
	if len(res) == 0 {
		return
	}
	var s strings.Builder
	for _, v := range res {
		fmt.Fprintf(&s, "\n  %s (%s): %s", v.ID, v.Impact, v.Help)
		for _, n := range v.Nodes {
			fmt.Fprintf(&s, "\n    %v %s\n      %s", n.Target, n.HTML, strings.ReplaceAll(n.FailureSummary, "\n", "\n      "))
		}
	}
	b.t.Errorf("axe-core: %d violation(s) on %s at %s:%s", len(res), state, b.Location(), s.String())
}

// ColorScheme makes the tab's pages prefer "light" or "dark" colours, as a
// system set to that mode does (prefers-color-scheme).
func (b *browserEnv) ColorScheme(scheme string) {
	b.t.Helper()
	if _, err := chromedp.Call(b.Ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
	}); err != nil {
		b.Fail("emulate prefers-color-scheme: "+scheme, err)
	}
}

// TestBrowserAxe checks every page, in light and dark mode, in the states
// hidden at load: a drop's result with its "Open site" button focused
// (signed in with the quality report, and anonymous with the claim link),
// the drop zone's alert, a flash success (a new key) and a flash error, on
// home, sign-in, claim, account, the site page, its delete confirmation
// and the 404 page.
func TestBrowserAxe(t *testing.T) {
	src := axeSource(t)
	b := newBrowserEnv(t)
	user := mustUser(t, b.App, "axe@example.com", "free", fixtureKey("axe"))
	site := mustDeploy(t, b.SD, user, "axesite00000001", "axe-site", "<h1>axe</h1>", "Checked by axe")
	const token = "claim-token-of-the-axe-test"
	mustAnon(t, b.SD, "", "axe-anon", token, time.Now().Add(time.Hour))
	claim := b.WebURL + "/claim/axe-anon?token=" + token
	many := map[string]string{}
	for i := range 11 { // the fixture's --max-files is 10
		many[fmt.Sprintf("p%02d.html", i)] = "x"
	}
	tooMany := writeTree(t, many)

	schemes := []string{"light", "dark"}
	setScheme := func(scheme string) func(string) string {
		t.Helper()
		b.ColorScheme(scheme)
		if dark, err := chromedp.Run(b.Ctx, chromedp.Evaluate[bool](`matchMedia("(prefers-color-scheme: dark)").matches`)); err != nil || dark != (scheme == "dark") {
			t.Fatalf("prefers-color-scheme dark is %v in %s mode (%v)", dark, scheme, err)
		}
		return func(state string) string { return state + " (" + scheme + ")" }
	}

	for _, scheme := range schemes { // signed out
		in := setScheme(scheme)
		b.Step("open home", chromedp.Navigate(b.WebURL+"/"), chromedp.WaitVisible(testid("drop-target")))
		b.Axe(src, in("home"))
		b.Step("drop anonymously", chromedp.SetUploadFiles(testid("drop-folder"), []string{writeTree(t, map[string]string{"index.html": "<h1>anon " + scheme + "</h1>"})}))
		b.dropWait()
		b.Step("focus Open site", chromedp.Focus(testid("drop-open")))
		b.Axe(src, in("home after an anonymous drop, Open site focused"))
		b.Step("open sign-in", chromedp.Navigate(b.WebURL+"/auth/login"), chromedp.WaitVisible(testid("email-input")))
		b.Axe(src, in("sign-in"))
		b.Step("open claim", chromedp.Navigate(claim), chromedp.WaitVisible(chromedp.CSS("main h1")))
		b.Axe(src, in("claim, signed out"))
		b.Step("open a page that is not there", chromedp.Navigate(b.WebURL+"/no/such/page"), chromedp.WaitVisible(testid("error-page")))
		b.Axe(src, in("404 page"))
	}

	b.SignIn(user)
	for _, scheme := range schemes {
		in := setScheme(scheme)
		b.Step("open claim signed in", chromedp.Navigate(claim), chromedp.WaitVisible(chromedp.CSS("main h1")))
		b.Axe(src, in("claim, signed in"))
		b.Step("open the account page", chromedp.Navigate(b.WebURL+"/account"), chromedp.WaitVisible(testid("drop-target")))
		b.Axe(src, in("account"))
		b.Step("drop a folder with a broken link", chromedp.SetUploadFiles(testid("drop-folder"), []string{writeTree(t, map[string]string{
			"index.html": `<!doctype html><title>x</title><h1>` + scheme + `</h1><a href="/missing.html">gone</a>`})}))
		b.dropWait()
		if b.Count(`[data-testid=drop-report]:not([hidden])`) != 1 {
			t.Fatal("the drop's quality report is not shown for a broken link")
		}
		b.Step("focus Open site", chromedp.Focus(testid("drop-open")))
		b.Axe(src, in("account after a drop with its report, Open site focused"))
		b.Step("drop too many files", chromedp.Navigate(b.WebURL+"/account"), chromedp.WaitVisible(testid("drop-target")),
			chromedp.SetUploadFiles(testid("drop-folder"), []string{tooMany}))
		b.dropError()
		b.Axe(src, in("account with the drop zone's alert"))
		b.Step("create a key", chromedp.SendKeys("#key-name", "axe "+scheme), chromedp.Click(testid("create-key")), chromedp.WaitVisible(testid("flash-secret")))
		b.Axe(src, in("account with a flash success and a new key"))
		b.Step("create a key with too long a name",
			chromedp.Evaluate[chromedp.Void](`document.querySelector("#key-name").removeAttribute("maxlength")`),
			chromedp.SendKeys("#key-name", strings.Repeat("k", maxKeyNameLen+1)),
			chromedp.Click(testid("create-key")), chromedp.WaitVisible(testid("flash-error")))
		b.Axe(src, in("account with a flash error"))

		b.Step("open the site page", chromedp.Navigate(b.WebURL+"/account/sites/"+site.Id), chromedp.WaitVisible(testid("drop-target")))
		b.Axe(src, in("site page"))
		b.Step("re-deploy from the site page", chromedp.SetUploadFiles(testid("drop-folder"), []string{writeTree(t, map[string]string{"index.html": "<h1>again " + scheme + "</h1>"})}))
		b.dropWait()
		b.Axe(src, in("site page after a re-deploy"))
		b.Step("open the delete confirmation", chromedp.Navigate(b.WebURL+"/account/sites/"+site.Id+"/delete"), chromedp.WaitVisible(chromedp.CSS("main h1")))
		b.Axe(src, in("site delete confirmation"))
	}
}
