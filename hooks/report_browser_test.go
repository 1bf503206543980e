package hooks

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"sitedrop/sites/abuse"
)

// TestBrowserReport walks the public report page in Chromium, signed
// out: the footer's link leads to it, a URL no site here serves is shown
// again with the error and the typed values, a site's URL is received
// (POST → 303 → the thank-you) and stored open in the queue; axe-core
// checks the form, its error and the thank-you.
func TestBrowserReport(t *testing.T) {
	src := axeSource(t)
	b := newBrowserEnv(t)
	user := mustUser(t, b.App, "reported@example.com", "free", fixtureKey("reported"))
	mustDeploy(t, b.SD, user, "reportedsite001", "reported-site", "<h1>fake bank</h1>", "Fake bank")

	b.Step("open the report page from the footer", chromedp.Navigate(b.WebURL+"/"), chromedp.WaitVisible(testid("drop-target")),
		chromedp.Click(testid("report-abuse")), chromedp.WaitVisible(testid("report-form")), Loaded)
	b.Axe(src, "report form")

	b.Step("report a URL no site here serves",
		chromedp.SendKeys(testid("report-url"), "https://nobody.example/"),
		chromedp.SetValue(testid("report-reason"), "phishing"),
		chromedp.SendKeys(testid("report-details"), "asks for my bank password"),
		chromedp.Click(testid("report-submit")), chromedp.WaitVisible(testid("report-error")), Loaded)
	if s := b.Text(testid("report-error")); !strings.Contains(s, "not a site hosted here") {
		t.Fatalf("the error: %q", s)
	}
	b.Axe(src, "report form, refused")
	details, err := chromedp.Run(b.Ctx, chromedp.Value(testid("report-details")))
	if err != nil || details != "asks for my bank password" {
		t.Fatalf("details kept: %q %v", details, err)
	}

	b.Step("report the site",
		chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-testid="report-url"]').value = ""`),
		chromedp.SendKeys(testid("report-url"), b.SiteURL("reported-site")+"login"),
		chromedp.Click(testid("report-submit")), chromedp.WaitVisible(testid("report-sent")), Loaded)
	if loc := b.Location(); !strings.HasSuffix(loc, "/report?sent=1") {
		t.Fatalf("after the report: %s", loc)
	}
	b.Axe(src, "report received")

	reps, err := b.SD.reports.List(abuse.Filter{Status: abuse.StatusOpen})
	if err != nil || len(reps) != 1 || reps[0].Slug() != "reported-site" || reps[0].Reason() != "phishing" ||
		reps[0].Details() != "asks for my bank password" {
		t.Fatalf("the queue: %v %v", reps, err)
	}
}
