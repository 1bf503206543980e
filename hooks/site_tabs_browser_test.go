package hooks

import (
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"sitedrop/sites"
)

// TestBrowserSiteTabsWithoutJS walks the site page's tabs with JavaScript
// off: each is reached from the tab bar, marked current, and shows its
// own content; a form post's message shows beside its form, on its tab;
// a reload after the post does not post again; an old link to a page of
// submissions lands on the Forms tab.
func TestBrowserSiteTabsWithoutJS(t *testing.T) {
	b := newBrowserEnv(t)
	alice, err := b.App.FindAuthRecordByEmail("users", "alice@example.com")
	if err != nil {
		t.Fatal(err)
	}
	b.SignIn(alice)
	if _, err := chromedp.Call(b.Ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		b.Fail("disable JavaScript", err)
	}
	page := b.WebURL + "/account/sites/" + idAliceSite
	b.Step("open the Overview", chromedp.Navigate(page), chromedp.WaitVisible(testid("site-summary")))
	if b.Count(`[data-testid="drop-noscript"]`) != 1 {
		t.Error("the Overview's drop zone does not say how to deploy without JavaScript")
	}
	tabs := []struct{ testid, label, path, shows string }{
		{"tab-deploys", "Deploys", "/deploys", "versions-list"},
		{"tab-analytics", "Analytics", "/analytics", "analytics"},
		{"tab-forms", "Forms", "/forms", "submissions-total"},
		{"tab-domains", "Domains", "/domains", "domain-form"},
		{"tab-settings", "Settings", "/settings", "settings-form"},
		{"tab-overview", "Overview", "", "site-summary"},
	}
	for _, tab := range tabs {
		b.Step("the "+tab.label+" tab", chromedp.Click(testid(tab.testid)), chromedp.WaitVisible(testid(tab.shows)), Loaded)
		if loc := b.Location(); loc != page+tab.path {
			t.Fatalf("the %s tab is at %s, want %s", tab.label, loc, page+tab.path)
		}
		if got := b.Text(`nav.tabs [aria-current="page"]`); got != tab.label || b.Count(`nav.tabs [aria-current]`) != 1 {
			t.Fatalf("the current tab says %q, want %q", got, tab.label)
		}
		for _, other := range tabs {
			if other.shows != tab.shows && b.Count(`[data-testid="`+other.shows+`"]`) != 0 {
				t.Errorf("the %s tab shows %s too", tab.label, other.shows)
			}
		}
	}

	// A post: its message beside its form, on its tab; a reload does not
	// post again.
	posts := func() int { return b.Received.Count("POST /account/sites/" + idAliceSite + "/notifications") }
	b.Step("turn notifications on", chromedp.Click(testid("tab-forms")), chromedp.WaitVisible(testid("notify-toggle")), Loaded,
		chromedp.Click(testid("notify-toggle")), chromedp.WaitVisible(testid("flash-success")), Loaded)
	if loc := b.Location(); loc != page+"/forms#notifications" {
		t.Fatalf("after the post at %s", loc)
	}
	if b.Count(`section#notifications [data-testid="flash-success"]`) != 1 || b.Count(`main > [data-testid^="flash-"]`) != 0 {
		t.Fatal("the message is not beside the notifications form")
	}
	if s := b.Text(`section#notifications [data-testid="flash-success"]`); !strings.Contains(s, "New submissions will be mailed to you.") {
		t.Fatalf("message %q", s)
	}
	rec, err := b.App.FindRecordById(sites.DeploymentsCollection, idAliceSite)
	if err != nil || !rec.GetBool("notify_email") || posts() != 1 {
		t.Fatalf("notify_email %v after %d posts (%v)", rec.GetBool("notify_email"), posts(), err)
	}
	b.Step("reload", chromedp.Reload(), chromedp.WaitVisible(testid("notify-toggle")))
	if posts() != 1 || b.Count(`[data-testid^="flash-"]`) != 0 {
		t.Fatalf("after a reload: %d posts, %d messages", posts(), b.Count(`[data-testid^="flash-"]`))
	}

	// The one-page site's links still land on their content.
	b.Step("an old link to page 1 of the submissions", chromedp.Navigate(page+"?page=1"), chromedp.WaitVisible(testid("submissions-total")))
	if loc := b.Location(); loc != page+"/forms?page=1#submissions" {
		t.Fatalf("the old link went to %s", loc)
	}
}
