package hooks

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
	"sitedrop/sites/accounts"
)

// The checks that span issue 30's parts: a redeploy leaves nothing stale
// on the site page's tabs, and axe-core finds nothing in the states the
// parts added (see TestBrowserAxeDashboardStates).

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

// putJSON sends body to the served app's API at path with PUT, as key's
// owner, and fails the test unless it answers 200.
func (b *browserEnv) putJSON(path, key, body string) {
	b.t.Helper()
	req, err := http.NewRequestWithContext(b.t.Context(), http.MethodPut, b.WebURL+path, strings.NewReader(body))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.t.Fatalf("PUT %s: %v", path, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(res.Body)
		b.t.Fatalf("PUT %s: %d %s", path, res.StatusCode, msg)
	}
}

// TestBrowserAxeDashboardStates runs axe-core, in light and dark mode, on the
// states issue 30 added that TestBrowserAxe does not reach: every tab of a
// site page (Deploys with a version's changes), a paused site's Settings
// tab with its head badge, the submission and webhook delete
// confirmations, an account page of more than ten sites (the search form,
// a badge of every state: live, expiring, protected, paused, disabled) with
// its sessions list of two named browsers, a key's revoke confirmation,
// the account deletion page, the claim page after claiming ("This site is
// yours") and the sign-in page after signing out.
func TestBrowserAxeDashboardStates(t *testing.T) {
	src := axeSource(t)
	b := newBrowserEnv(t)
	pia := mustFindUser(t, b.App, "pia@example.com")
	mustTwelveSites(t, b.App, b.SD, pia)
	states := map[string]func(*sites.Deployment){
		"banana": func(d *sites.Deployment) { d.Set(sites.FieldStatus, "disabled") },
		"damson": func(d *sites.Deployment) { d.SetPaused(true) },
		"elder":  func(d *sites.Deployment) { d.Set("protect_link", true) },
	}
	for slug, set := range states {
		rec, err := b.App.FindFirstRecordByData(sites.DeploymentsCollection, "slug", slug)
		if err != nil {
			t.Fatal(err)
		}
		d := sites.DeploymentOf(rec)
		set(d)
		if err := b.App.Save(d.Record); err != nil {
			t.Fatalf("set %s's state: %v", slug, err)
		}
	}
	// An owned site never expires (a record hook clears its expiry on
	// every save), so the list's "expiring" badge is written past the
	// hooks: its colours are checked all the same.
	if _, err := b.App.DB().Update(sites.DeploymentsCollection, dbx.Params{sites.FieldExpiresAt: sites.DBTime(time.Now().UTC().Add(5 * time.Hour))},
		dbx.HashExp{sites.FieldSlug: "fig"}).Execute(); err != nil {
		t.Fatal(err)
	}
	paused, err := b.App.FindFirstRecordByData(sites.DeploymentsCollection, "slug", "damson")
	if err != nil {
		t.Fatal(err)
	}

	// the site whose tabs are checked: two versions, a submission, a
	// webhook and a pending domain
	site := mustDeploy(t, b.SD, pia, "axetabs00000001", "axe-tabs", `<h1>one</h1><form method="post"><input name="email"></form>`, "Tabs under axe")
	b.putJSON("/deploy/"+site.Id, keyPia, `{"html":"<h1>two</h1>","message":"The second version"}`)
	sub := mustSubmission(t, b.App, site.Id, map[string]any{"email": "someone@example.com", "message": "Hello\nsecond line"})
	hook := mustWebhook(t, b.App, site.Id, "http://127.0.0.1:9/hook")
	mustDomain(t, b.App, site.Id, "shop.example.com", false)
	tabs := "/account/sites/" + site.Id

	// a second browser's session, named by its User-Agent
	col, err := b.App.FindCollectionByNameOrId(accounts.SessionsCollection)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := accounts.ListAPIKeys(b.App, pia)
	if err != nil || len(keys) == 0 {
		t.Fatalf("pia's keys: %v", err)
	}
	other := core.NewRecord(col)
	other.Set("user", pia.Id)
	other.Set("api_key", keys[0].Id)
	other.Set("token_hash", accounts.HashSecret("another-browser-of-pia"))
	other.Set("expires_at", time.Now().Add(time.Hour).UTC())
	other.Set(accounts.FieldUserAgent, "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15")
	if err := b.App.Save(other); err != nil {
		t.Fatal(err)
	}
	claim := b.WebURL + "/claim/anon-site?token=" + url.QueryEscape(anonToken)

	schemes := []string{"light", "dark"}
	setScheme := func(scheme string) func(string) string {
		t.Helper()
		b.ColorScheme(scheme)
		if dark, err := chromedp.Run(b.Ctx, chromedp.Evaluate[bool](`matchMedia("(prefers-color-scheme: dark)").matches`)); err != nil || dark != (scheme == "dark") {
			t.Fatalf("prefers-color-scheme dark is %v in %s mode (%v)", dark, scheme, err)
		}
		return func(state string) string { return state + " (" + scheme + ")" }
	}

	b.SignIn(pia)
	for i, scheme := range schemes {
		in := setScheme(scheme)
		if i == 0 {
			b.Step("claim the anonymous site", chromedp.Navigate(claim), chromedp.WaitVisible(testid("claim-button")),
				chromedp.Click(testid("claim-button")), chromedp.WaitVisible(testid("flash-success")), Loaded)
			b.Axe(src, in("site page just claimed, with its message"))
		}
		b.Step("open the claim link of a site claimed", chromedp.Navigate(claim), chromedp.WaitVisible(testid("claim-done")))
		if s := b.Text(chromedp.CSS("main")); !strings.Contains(s, "This site is yours") {
			t.Fatalf("the claim page after claiming says:\n%s", s)
		}
		b.Axe(src, in(`claim page after claiming ("This site is yours")`))

		b.Step("open the account page", chromedp.Navigate(b.WebURL+"/account"), chromedp.WaitVisible(testid("site-search")),
			chromedp.WaitVisible(testid("this-browser")))
		for _, state := range []string{"live", "expiring", "paused", "disabled"} {
			if b.Count(`#site-list [data-testid="site-state"].badge.`+state) == 0 {
				t.Fatalf("the account page shows no %s badge; its list:\n%s", state, b.Text("#site-list"))
			}
		}
		if b.Count(`#site-list [data-testid="protected-badge"]`) == 0 || b.Count(`[data-testid="session-row"]`) < 2 {
			t.Fatal("the account page shows no protected badge or fewer than two sessions")
		}
		b.Axe(src, in("account with 14 sites (search, every badge) and two sessions"))
		b.Step("search the list", chromedp.SendKeys(testid("site-search"), "zzz-nothing"), chromedp.Click(testid("site-find-apply")),
			chromedp.WaitVisible(testid("no-match")))
		b.Axe(src, in("account, a search that matches nothing"))

		for _, p := range []struct{ state, path, shows string }{
			{"site Overview", tabs, "site-summary"},
			{"site Deploys with a version's changes", tabs + "/deploys?changes=2", "versions-list"},
			{"site Analytics", tabs + "/analytics", "analytics"},
			{"site Forms", tabs + "/forms", "submissions-total"},
			{"site Domains with a pending domain", tabs + "/domains", "domain-form"},
			{"site Settings", tabs + "/settings", "settings-form"},
			{"paused site's Settings", "/account/sites/" + paused.Id + "/settings", "controls-resume"},
			{"submission delete confirmation", tabs + "/submissions/" + sub.Id + "/delete", ""},
			{"webhook delete confirmation", tabs + "/webhooks/" + hook.Id + "/delete", ""},
			{"key revoke confirmation", "/account/keys/" + keys[0].Id + "/revoke", "confirm-revoke-key"},
			{"account deletion", "/account/delete", "account-delete-confirm"},
		} {
			shows := chromedp.CSS("main h1")
			if p.shows != "" {
				shows = testid(p.shows)
			}
			b.Step("open the "+p.state, chromedp.Navigate(b.WebURL+p.path), chromedp.WaitVisible(shows))
			if p.state == "paused site's Settings" && b.Count(`[data-testid="site-paused-badge"]`) != 1 {
				t.Fatal("the paused site's head shows no Paused badge")
			}
			if strings.HasSuffix(p.state, "changes") && b.Count(`#changes-h`) != 1 {
				t.Fatal("the Deploys tab shows no changes for ?changes=2")
			}
			b.Axe(src, in(p.state))
		}
	}

	// signing out lands on the sign-in page with its message, which a
	// reload keeps
	b.Step("sign out", chromedp.Navigate(b.WebURL+"/account"), chromedp.WaitVisible(testid("sign-out")),
		chromedp.Click(testid("sign-out")), chromedp.WaitVisible(testid("signed-out")), Loaded)
	if loc := b.Location(); loc != b.WebURL+"/auth/login?signed_out=1" {
		t.Fatalf("after signing out the browser is at %s", loc)
	}
	for _, scheme := range schemes {
		in := setScheme(scheme)
		b.Step("reload", chromedp.Reload(), chromedp.WaitVisible(testid("signed-out")))
		b.Axe(src, in("sign-in after signing out"))
	}
}
