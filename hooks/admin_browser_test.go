package hooks

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"sitedrop/sites"
	"sitedrop/sites/abuse"
	"sitedrop/sites/accounts"
)

// TestBrowserModeration walks the moderation page in Chromium: /admin
// sends to its sign-in, a superuser's password opens it, the report is
// there with its site; the site is taken down (it answers 410) and
// restored, its content blocked, its owner banned, and anonymous deploys
// turned off, each form coming back with its message; the site is
// deleted after its confirmation page (Cancel first keeps it); axe-core
// checks the sign-in, the page and the confirmation, in light and dark
// mode.
func TestBrowserModeration(t *testing.T) {
	src := axeSource(t)
	b := newBrowserEnv(t)
	mustSuperuser(t, b.App, "admin@example.com", "a-long-password")
	owner := mustUser(t, b.App, "kit@example.com", "free", fixtureKey("kit"))
	mustDeploy(t, b.SD, owner, "kitsite00000001", "kit-site", "<h1>fake bank</h1>", "Fake bank")
	rep, err := b.SD.reports.Open(abuse.NewReport{URL: b.SiteURL("kit-site") + "login", Reason: "phishing", Details: "asks for a card number", IP: "192.0.2.9"})
	if err != nil {
		t.Fatal(err)
	}
	row := "#report-" + rep.Id + " "
	// submit clicks a form's button and waits for the page it comes back
	// to with the message text (the last page's messages are removed
	// first, so that a message found is the new page's)
	submit := func(name string, button chromedp.CSS, text string) {
		t.Helper()
		b.Step(name,
			chromedp.Evaluate[chromedp.Void](`document.querySelectorAll('[data-testid^="flash-"]').forEach(e => e.remove())`),
			chromedp.Click(button), chromedp.WaitVisible(testid("flash-success")), Loaded,
			chromedp.Poll[chromedp.Void](`document.body.innerText.includes(`+strconv.Quote(text)+`)`))
	}
	axe := func(state string) {
		t.Helper()
		for _, scheme := range []string{"light", "dark"} {
			b.ColorScheme(scheme)
			b.Axe(src, state+" ("+scheme+")")
		}
		b.ColorScheme("light")
	}
	siteCode := func() int {
		t.Helper()
		code, _ := siteGet(t, b.App, "kit-site.localhost", "/")
		return code
	}

	b.Step("open /admin: its sign-in", chromedp.Navigate(b.WebURL+"/admin"), chromedp.WaitVisible(testid("admin-login")), Loaded)
	axe("moderation sign-in")
	b.Step("a wrong password",
		chromedp.SendKeys(testid("admin-email"), "admin@example.com"), chromedp.SendKeys(testid("admin-password"), "wrong"),
		chromedp.Click(testid("admin-signin")), chromedp.WaitVisible(testid("admin-login-error")), Loaded)
	axe("moderation sign-in, refused")
	b.Step("sign in", chromedp.SendKeys(testid("admin-password"), "a-long-password"),
		chromedp.Click(testid("admin-signin")), chromedp.WaitVisible(testid("admin-reports")), Loaded)
	if s := b.Text(chromedp.CSS(row)); !strings.Contains(s, "asks for a card number") || !strings.Contains(s, "kit@example.com") || !strings.Contains(s, "kit-site") {
		t.Fatalf("the report's row: %q", s)
	}
	axe("moderation page")

	b.Step("type a reason", chromedp.SendKeys(chromedp.CSS(row+`input[name="reason"]`), "Phishing kit"))
	submit("take the site down", chromedp.CSS(row+`[data-testid="site-takedown"]`), "kit-site is taken down.")
	if code := siteCode(); code != http.StatusGone {
		t.Fatalf("the site after the takedown: %d", code)
	}
	axe("moderation page, a site taken down")
	submit("restore it", chromedp.CSS(row+`[data-testid="site-restore"]`), "kit-site is restored.")
	if code := siteCode(); code != http.StatusOK {
		t.Fatalf("the site after the restore: %d", code)
	}
	submit("block its content", chromedp.CSS(row+`[data-testid="site-block"]`), "1 page of kit-site blocked.")
	b.Step("type a ban reason", chromedp.SendKeys(chromedp.CSS(row+`form[action$="/ban"] input[name="reason"]`), "Fraud"))
	submit("ban its owner", chromedp.CSS(row+`[data-testid="owner-ban"]`), "kit@example.com is banned")
	if rec, _ := b.App.FindRecordById(accounts.UsersCollection, owner.Id); !accounts.UserOf(rec).Banned() || siteCode() != http.StatusGone {
		t.Fatal("the owner is not banned, or the site still served")
	}
	axe("moderation page, owner banned, a block")
	b.Step("choose off", chromedp.SetValue(chromedp.CSS("#anon-deploys"), "off"))
	submit("turn anonymous deploys off", testid("anon-save"), "Anonymous deploys' settings saved.")
	if b.SD.settings.Anon().Enabled {
		t.Fatal("anonymous deploys still on")
	}

	// deleting asks first, on a page of its own; Cancel changes nothing
	b.Step("ask to delete the site", chromedp.Click(chromedp.CSS(row+`[data-testid="site-delete"]`)),
		chromedp.WaitVisible(testid("admin-site-delete")), Loaded)
	axe("moderation, delete a site?")
	b.Step("cancel", chromedp.Click(testid("site-delete-cancel")), chromedp.WaitVisible(testid("admin-reports")), Loaded)
	if _, err := sites.FindDeployment(b.App, "kitsite00000001"); err != nil {
		t.Fatal("the site is gone after Cancel")
	}
	b.Step("ask again", chromedp.Click(chromedp.CSS(row+`[data-testid="site-delete"]`)),
		chromedp.WaitVisible(testid("admin-site-delete")), Loaded)
	submit("delete the site", testid("site-delete-confirm"), "kit-site is deleted.")
	if _, err := sites.FindDeployment(b.App, "kitsite00000001"); err == nil {
		t.Fatal("the site is not deleted")
	}
}
