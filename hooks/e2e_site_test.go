package hooks

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/pocketbase/dbx"

	"sitedrop/sites"
	"sitedrop/sites/forms"
)

// TestBrowserSitePage drives the site page's tabs in Chromium as its owner
// would: change the settings (the live site gets the new title; the
// message shows in the settings panel), add a webhook and send it a test
// that the log shows delivered (the message in that webhook's row),
// delete a submission and a webhook after their confirmations (Cancel
// deletes nothing), reload after each post (nothing is done twice), fit
// a 390 px screen on every tab, and delete the site through its
// confirmation.
func TestBrowserSitePage(t *testing.T) {
	b := newBrowserEnv(t, func(c *Config) { c.WebhooksAllowPrivate = true })
	alice, err := b.App.FindAuthRecordByEmail("users", "alice@example.com")
	if err != nil {
		t.Fatal(err)
	}
	b.SignIn(alice)
	page := b.WebURL + "/account/sites/" + idAliceSite
	count := func(collection string, where dbx.Expression) int {
		t.Helper()
		n, err := b.App.CountRecords(collection, where)
		if err != nil {
			t.Fatal(err)
		}
		return int(n)
	}
	flash := func(kind, want string) {
		t.Helper()
		if got := b.Text(testid("flash-" + kind)); !strings.Contains(got, want) {
			t.Fatalf("flash-%s says %q, want %q", kind, got, want)
		}
	}
	// beside checks that the page's one message is inside the element
	// sel (the panel or row of the form posted), and that the page was
	// sent there (#id).
	beside := func(sel, hash string) {
		t.Helper()
		if n := b.Count(sel + ` [data-testid^="flash-"]`); n != 1 || b.Count(`[data-testid^="flash-"]`) != 1 {
			t.Fatalf("the message is not in %s (%d there, %d in all)", sel, n, b.Count(`[data-testid^="flash-"]`))
		}
		if loc := b.Location(); !strings.HasSuffix(loc, hash) {
			t.Fatalf("after the post at %s, want #%s", loc, hash)
		}
	}

	// Settings: a new title is a new version, served by the live site.
	b.Step("open the Settings tab", chromedp.Navigate(page+"/settings"), chromedp.WaitVisible(testid("settings-form")))
	b.Step("save a new title",
		chromedp.SetValue(testid("settings-title"), "Renamed in the browser"),
		chromedp.Click(testid("settings-save")),
		chromedp.WaitVisible(testid("flash-success")))
	flash("success", "version 2 is live")
	beside("section#settings", "/settings#settings")
	b.Step("reload after the post", chromedp.Reload(), chromedp.WaitVisible(testid("settings-form")))
	if b.Count(`[data-testid="flash-success"]`) != 0 || count(sites.VersionsCollection, dbx.HashExp{"deployment": idAliceSite}) != 2 {
		t.Fatal("a reload repeated the settings post or its message")
	}
	b.Step("open the live site", chromedp.Navigate(b.SiteURL("alice-site")), chromedp.WaitVisible(chromedp.CSS("h1")))
	if title, err := chromedp.Run(b.Ctx, chromedp.Title()); err != nil || title != "Renamed in the browser" {
		t.Fatalf("live site title %q, %v", title, err)
	}

	// Webhooks: add one, send a test, see it delivered in the log.
	var got atomic.Int32
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(forms.HeaderWebhookEvent) == forms.EventTest {
			got.Add(1)
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rcv.Close)
	b.Step("add a webhook",
		chromedp.Navigate(page+"/forms"),
		chromedp.SendKeys(testid("webhook-url"), rcv.URL+"/hook"),
		chromedp.Click(testid("webhook-create")),
		chromedp.WaitVisible(testid("flash-secret")))
	b.Step("reload after adding", chromedp.Reload(), chromedp.WaitVisible(testid("webhook-row")))
	if n := count(forms.WebhooksCollection, dbx.HashExp{"deployment": idAliceSite}); n != 1 || b.Count(`[data-testid="flash-secret"]`) != 0 {
		t.Fatalf("%d webhooks after a reload, or the secret shown again", n)
	}
	hooks, err := b.App.FindAllRecords(forms.WebhooksCollection, dbx.HashExp{"deployment": idAliceSite})
	if err != nil || len(hooks) != 1 {
		t.Fatal(hooks, err)
	}
	row := "webhook-" + hooks[0].Id
	b.Step("send a test", chromedp.Click(testid("webhook-test")), chromedp.WaitVisible(testid("flash-success")))
	flash("success", "Test delivery queued")
	beside("li#"+row, "/forms#"+row)
	if _, err := b.SD.deliverer.RunOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
	b.Step("see it in the log", chromedp.Navigate(page+"/forms"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="delivery-row"][data-status="delivered"]`)))
	if s := b.Text(testid("delivery-row")); !strings.Contains(s, "test") || !strings.Contains(s, "HTTP 204") {
		t.Fatalf("log row %q", s)
	}
	if got.Load() != 1 {
		t.Fatalf("receiver got %d tests", got.Load())
	}

	// Submissions: one with two lines, deleted; a reload deletes nothing more.
	for _, msg := range []string{"first\nsecond line", "keep me"} {
		res, err := http.Post(b.WebURL+"/submit/"+idAliceSite, "application/json", strings.NewReader(`{"msg":"`+strings.ReplaceAll(msg, "\n", `\n`)+`"}`))
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("submit: %v %v", res, err)
		}
		res.Body.Close()
	}
	b.Step("open the submissions", chromedp.Navigate(page+"/forms"), chromedp.WaitVisible(testid("submission-row")))
	if s := b.Text(testid("submission-row")); !strings.Contains(s, "keep me") {
		t.Fatalf("newest first: %q", s)
	}
	lines, err := chromedp.Run(b.Ctx, chromedp.Evaluate[float64](`(() => { const dd = document.querySelectorAll('.submission dd')[1]; return dd.getBoundingClientRect().height / parseFloat(getComputedStyle(dd).lineHeight) })()`))
	if err != nil || lines < 1.9 {
		t.Fatalf("the two-line value shows on %.1f lines (%v)", lines, err)
	}
	older := chromedp.CSS(`[data-testid="submission-row"]:nth-child(2) [data-testid="submission-delete"]`)
	b.Step("ask to delete the older submission, then cancel",
		chromedp.Click(older), chromedp.WaitVisible(testid("confirm-submission")))
	if s := b.Text(testid("confirm-submission")); !strings.Contains(s, "first") {
		t.Fatalf("the confirmation shows %q", s)
	}
	b.Step("cancel", chromedp.Click(testid("delete-cancel")), chromedp.WaitVisible(testid("submission-row")))
	if n := count(forms.SubmissionsCollection, dbx.HashExp{"deployment": idAliceSite}); n != 2 {
		t.Fatalf("%d submissions after asking and cancelling, want 2", n)
	}
	b.Step("delete the older submission",
		chromedp.Click(older), chromedp.WaitVisible(testid("confirm-submission")),
		chromedp.Click(testid("delete-confirm")),
		chromedp.WaitVisible(testid("flash-success")))
	flash("success", "Submission deleted")
	beside("section#submissions", "/forms#submissions")
	b.Step("reload after deleting", chromedp.Reload(), chromedp.WaitVisible(testid("submission-row")))
	if n := count(forms.SubmissionsCollection, dbx.HashExp{"deployment": idAliceSite}); n != 1 || b.Count(`[data-testid="submission-row"]`) != 1 {
		t.Fatalf("%d submissions left, want 1", n)
	}

	// Webhooks: deleted only after the confirmation.
	b.Step("ask to delete the webhook", chromedp.Click(testid("webhook-delete")), chromedp.WaitVisible(testid("confirm-webhook")))
	if s := b.Text(testid("confirm-webhook")); s != rcv.URL+"/hook" {
		t.Fatalf("the confirmation names %q", s)
	}
	if n := count(forms.WebhooksCollection, dbx.HashExp{"deployment": idAliceSite}); n != 1 {
		t.Fatal("deleted before the confirmation")
	}
	b.Step("confirm", chromedp.Click(testid("delete-confirm")), chromedp.WaitVisible(testid("flash-success")))
	flash("success", "deleted")
	beside("section#webhooks", "/forms#webhooks")
	b.Step("reload after deleting the webhook", chromedp.Reload(), chromedp.WaitVisible(testid("webhook-form")))
	if n := count(forms.WebhooksCollection, dbx.HashExp{"deployment": idAliceSite}); n != 0 || b.Count(`[data-testid^="flash-"]`) != 0 {
		t.Fatalf("%d webhooks, or the message again after a reload", n)
	}

	// Mobile: nothing overflows at 390 px, here or on the confirmation,
	// even with a long unbroken title and webhook URL.
	rec, err := b.App.FindRecordById(sites.DeploymentsCollection, idAliceSite)
	if err != nil {
		t.Fatal(err)
	}
	rec.Set("title", strings.Repeat("Wide", 40))
	if err := b.App.Save(rec); err != nil {
		t.Fatal(err)
	}
	mustWebhook(t, b.App, idAliceSite, "https://93.184.216.34/"+strings.Repeat("long-path-", 30))
	b.Step("narrow screen", chromedp.EmulateViewport(390, 800), chromedp.Navigate(page), chromedp.WaitVisible(testid("site-tabs")))
	long, err := b.App.FindAllRecords(forms.WebhooksCollection, dbx.HashExp{"deployment": idAliceSite})
	if err != nil || len(long) != 1 {
		t.Fatal(long, err)
	}
	subs, err := b.App.FindAllRecords(forms.SubmissionsCollection, dbx.HashExp{"deployment": idAliceSite})
	if err != nil || len(subs) != 1 {
		t.Fatal(subs, err)
	}
	for _, url := range []string{page, page + "/deploys", page + "/analytics", page + "/forms", page + "/domains", page + "/settings",
		page + "/webhooks/" + long[0].Id + "/delete", page + "/submissions/" + subs[0].Id + "/delete", page + "/delete"} {
		b.Step("open "+url, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS("h1")))
		if w, err := chromedp.Run(b.Ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`)); err != nil || w > 390 {
			t.Fatalf("%s is %d px wide at 390 (%v)", url, w, err)
		}
	}

	// Delete: a wrong slug refuses, the right one deletes.
	b.Step("a wrong slug",
		chromedp.SendKeys(testid("delete-slug"), "alice"),
		chromedp.Click(testid("delete-confirm")),
		chromedp.WaitVisible(testid("flash-error")))
	flash("error", "does not match")
	if count(sites.DeploymentsCollection, dbx.HashExp{"id": idAliceSite}) != 1 {
		t.Fatal("deleted with a wrong slug")
	}
	b.Step("the right slug",
		chromedp.SendKeys(testid("delete-slug"), "alice-site"),
		chromedp.Click(testid("delete-confirm")),
		chromedp.WaitVisible(testid("flash-success")))
	flash("success", "Site alice-site deleted")
	if !strings.HasSuffix(b.Location(), "/account") || count(sites.DeploymentsCollection, dbx.HashExp{"id": idAliceSite}) != 0 {
		t.Fatalf("not deleted, or not back on the account page: %s", b.Location())
	}
}
