package hooks

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The checks that span issue 30's parts: a redeploy leaves nothing stale
// on the site page's tabs, and axe-core finds nothing in the states the
// parts added (see TestBrowserAxeIssue30).

// refreshWait bounds the wait for the page's data-refresh parts to show a
// deploy: the refresh is one GET of the page on loopback.
const refreshWait = 10 * time.Second

// markPage sets a mark on the tab's window that a reload would lose, so a
// test can tell a page updated in place from one loaded again.
func (b *browserEnv) markPage() {
	b.t.Helper()
	b.Step("mark the page", chromedp.Evaluate[chromedp.Void](`window.__notReloaded = true`))
}

// notReloaded fails the test when the page was loaded again since markPage.
func (b *browserEnv) notReloaded(what string) {
	b.t.Helper()
	same, err := chromedp.Run(b.Ctx, chromedp.Evaluate[bool](`window.__notReloaded === true`))
	if err != nil {
		b.Fail("read the page's mark", err)
	}
	if !same {
		b.t.Fatalf("%s: the page was loaded again, want it updated in place", what)
	}
}

// TestBrowserRedeployNothingStale: a redeploy from the site's Overview
// updates its state block (#site-summary) to the new live version, and one
// from the Deploys tab marks the new version live in #versions-list, both
// without a reload (deploy.js replaces the page's data-refresh parts by
// fresh ones); the focus stays on the result.
func TestBrowserRedeployNothingStale(t *testing.T) {
	b := newBrowserEnv(t)
	user := mustUser(t, b.App, "stale@example.com", "free", fixtureKey("stale"))
	site := mustDeploy(t, b.SD, user, "stalesite000001", "stale-site", "<h1>one</h1>", "Stale or not")
	b.SignIn(user)
	overview := b.WebURL + "/account/sites/" + site.Id

	b.Step("open the Overview", chromedp.Navigate(overview), chromedp.WaitVisible(testid("drop-target")))
	if s := b.Text(testid("last-deploy")); !strings.Contains(s, "Live version: 1,") {
		t.Fatalf("the Overview before the redeploy says %q", s)
	}
	b.markPage()
	b.Step("redeploy from the Overview", chromedp.SetUploadFiles(testid("drop-folder"), []string{writeTree(t, map[string]string{"index.html": "<h1>two</h1>"})}))
	b.dropWait()
	if _, err := chromedp.Run(b.Ctx, chromedp.Poll[chromedp.Void](
		`document.querySelector("#site-summary [data-testid=last-deploy]").textContent.includes("Live version: 2,")`,
		chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(refreshWait))); err != nil {
		t.Fatalf("the Overview still says %q after the redeploy of version 2 (%v)", b.Text(testid("last-deploy")), err)
	}
	b.notReloaded("the Overview after a redeploy")
	if b.Count(`#site-summary[data-refresh]`) != 1 {
		t.Fatal("the fresh state block lost its data-refresh mark")
	}
	if f := b.focused(); f != "drop-result" {
		t.Fatalf("focus after the Overview's refresh on %q, want the result", f)
	}

	liveVersion := func() string {
		t.Helper()
		n, err := chromedp.Run(b.Ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#versions-list [data-testid=version-row]"))
			.filter(r => r.querySelector("[data-testid=version-live]")).map(r => r.querySelector("strong").textContent)`))
		if err != nil {
			b.Fail("read the live version", err)
		}
		return strings.Join(n, ", ")
	}
	b.Step("open the Deploys tab", chromedp.Click(testid("tab-deploys")), chromedp.WaitVisible(testid("versions-list")), Loaded,
		chromedp.WaitVisible(testid("drop-target")))
	if got := liveVersion(); got != "Version 2" {
		t.Fatalf("the Deploys tab shows %q live, want Version 2", got)
	}
	b.markPage()
	b.Step("redeploy from the Deploys tab", chromedp.SetUploadFiles(testid("drop-folder"), []string{writeTree(t, map[string]string{"index.html": "<h1>three</h1>"})}))
	b.dropWait()
	if _, err := chromedp.Run(b.Ctx, chromedp.Poll[chromedp.Void](
		`document.querySelectorAll("#versions-list [data-testid=version-row]").length === 3`,
		chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(refreshWait))); err != nil {
		t.Fatalf("the Deploys tab lists %d versions after the redeploy of version 3, live: %q (%v)",
			b.Count(`#versions-list [data-testid=version-row]`), liveVersion(), err)
	}
	if got := liveVersion(); got != "Version 3" {
		t.Fatalf("after the redeploy the Deploys tab shows %q live, want Version 3", got)
	}
	b.notReloaded("the Deploys tab after a redeploy")
	if b.Count(`#versions-list[data-refresh]`) != 1 {
		t.Fatal("the fresh versions list lost its data-refresh mark")
	}
	if f := b.focused(); f != "drop-result" {
		t.Fatalf("focus after the Deploys tab's refresh on %q, want the result", f)
	}
	if n := b.Received.Count("GET /account/sites/" + site.Id + "/deploys"); n != 2 {
		t.Fatalf("%d GET of the Deploys tab, want the page and its one refresh", n)
	}
}
