package hooks

import (
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserClaimReload: the claim button is POST → 303 → GET. It lands on
// the claimed site's page with a message; a reload posts nothing again and
// still shows the site's page; the claim link opened again (and
// reloaded) says the site is the claimer's, with a link to its page, never
// "cannot be claimed".
func TestBrowserClaimReload(t *testing.T) {
	b := newBrowserEnv(t)
	bob, _ := b.App.FindAuthRecordByEmail("users", "bob@example.com")
	b.SignIn(bob)
	claimURL := b.WebURL + "/claim/anon-site?token=" + url.QueryEscape(anonToken)
	sitePage := b.WebURL + "/account/sites/" + idAnonSite
	posts := func() int { return b.Received.Count("POST /claim/") }

	b.Step("open the claim link", chromedp.Navigate(claimURL), chromedp.WaitVisible(testid("claim-button")))
	b.Step("claim the site",
		chromedp.Click(testid("claim-button")),
		chromedp.WaitVisible(testid("flash-success")),
		Loaded,
	)
	if loc := b.Location(); loc != sitePage {
		t.Fatalf("after claiming the browser is at %s, want the site's page %s", loc, sitePage)
	}
	if s := b.Text(testid("flash-success")); !strings.Contains(s, "anon-site is now yours") {
		t.Fatalf("message %q", s)
	}
	if n := posts(); n != 1 {
		t.Fatalf("%d claim posts, want 1", n)
	}

	b.Step("reload", chromedp.Reload(), chromedp.WaitVisible(`h1.site-heading`))
	if loc, n := b.Location(), posts(); loc != sitePage || n != 1 {
		t.Fatalf("after a reload: at %s, %d claim posts (want %s, 1)", loc, n, sitePage)
	}
	if h := b.Text(chromedp.CSS("h1.site-heading")); h != "anon-site" {
		t.Fatalf("site page heading %q", h)
	}

	// the claim link again (from the deploy answer, the address bar's
	// history): the server says it is bob's
	b.Step("open the claim link again", chromedp.Navigate(claimURL), chromedp.WaitVisible(testid("claim-done")))
	b.Step("reload the claim link", chromedp.Reload(), chromedp.WaitVisible(testid("claim-done")))
	if loc := b.Location(); loc != claimURL {
		t.Fatalf("back at %s, want the claim link", loc)
	}
	if s := b.Text(chromedp.CSS("main")); !strings.Contains(s, "This site is yours") || strings.Contains(s, "cannot be claimed") {
		t.Fatalf("the claim link to its claimer:\n%s", s)
	}
	if n := posts(); n != 1 {
		t.Fatalf("%d claim posts, want 1", n)
	}
	b.Step("follow the link to the site's page", chromedp.Click(testid("claimed-site-page")), chromedp.WaitVisible(`h1.site-heading`))
	if loc := b.Location(); loc != sitePage {
		t.Fatalf("the link went to %s", loc)
	}
}
