package hooks

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserSiteControls renames a site and pauses it from its page,
// with plain forms: each post comes back to the controls with a message;
// the old address takes the browser to the new one, same path; a paused
// site shows the paused page, and is served again once resumed.
func TestBrowserSiteControls(t *testing.T) {
	b := newBrowserEnv(t)
	alice, _ := b.App.FindAuthRecordByEmail("users", "alice@example.com")
	b.SignIn(alice)
	page := b.WebURL + "/account/sites/" + idAliceSite + "/settings"

	b.Step("open the site page", chromedp.Navigate(page), chromedp.WaitVisible(testid("rename-form")))
	b.Step("rename it",
		chromedp.SetValue(testid("rename-slug"), "alice-renamed"),
		chromedp.Click(testid("rename-save")),
		chromedp.WaitVisible(testid("flash-success")),
		Loaded,
	)
	if got := b.Text(testid("flash-success")); !strings.Contains(got, "Renamed: the site is now at "+b.SiteURL("alice-renamed")) {
		t.Fatalf("rename flash %q", got)
	}
	if loc := b.Location(); loc != page+"#site-controls" {
		t.Errorf("after the rename the browser is at %s", loc)
	}
	if got := b.Text(testid("old-slugs")); !strings.Contains(got, b.SiteURL("alice-site")) {
		t.Errorf("old addresses %q", got)
	}
	b.Step("the Overview", chromedp.Navigate(strings.TrimSuffix(page, "/settings")), chromedp.WaitVisible(testid("site-url")))
	if got := b.Text(testid("site-url")); got != b.SiteURL("alice-renamed") {
		t.Errorf("the page links to %q", got)
	}
	b.Step("the old address", chromedp.Navigate(b.SiteURL("alice-site")+"?from=old"), chromedp.WaitVisible("h1"))
	if loc := b.Location(); loc != b.SiteURL("alice-renamed")+"?from=old" {
		t.Errorf("the old address led to %s", loc)
	}
	if got := b.Text("h1"); got != "alice" {
		t.Errorf("the renamed site shows %q", got)
	}

	b.Step("pause it", chromedp.Navigate(page), chromedp.WaitVisible(testid("controls-pause")),
		chromedp.Click(testid("controls-pause")), chromedp.WaitVisible(testid("flash-success")), Loaded)
	if got := b.Text(testid("flash-success")); !strings.Contains(got, "Site paused") {
		t.Fatalf("pause flash %q", got)
	}
	if n := b.Count(`[data-testid="controls-resume"]`); n != 1 {
		t.Fatalf("%d resume buttons on the paused site's page", n)
	}
	if n := b.Count(`[data-testid="site-paused-badge"]`); n != 1 {
		t.Errorf("%d Paused badges in the paused site's page head", n)
	}
	// a 503 page: waiting for it to be visible in the navigation's step
	// hung here; its h1 being ready is enough
	b.Step("the paused site", chromedp.Navigate(b.SiteURL("alice-renamed")))
	b.Step("its page", chromedp.WaitReady("h1"))
	if got := b.Text("h1"); got != "Site paused" {
		t.Errorf("the paused site shows %q", got)
	}
	b.Step("resume it", chromedp.Navigate(page), chromedp.WaitVisible(testid("controls-resume")),
		chromedp.Click(testid("controls-resume")), chromedp.WaitVisible(testid("flash-success")), Loaded)
	if got := b.Text(testid("flash-success")); !strings.Contains(got, "Site resumed") {
		t.Fatalf("resume flash %q", got)
	}
	b.Step("the resumed site", chromedp.Navigate(b.SiteURL("alice-renamed")), chromedp.WaitVisible("h1"))
	if got := b.Text("h1"); got != "alice" {
		t.Errorf("the resumed site shows %q", got)
	}
}
