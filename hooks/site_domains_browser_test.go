package hooks

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserSiteDomains adds a long custom domain on the site page
// without JavaScript's help (a plain form), reads the records to create
// at a phone's width, checks it and removes it.
func TestBrowserSiteDomains(t *testing.T) {
	dns := startFakeDNS(t)
	b := newBrowserEnv(t, func(c *Config) {
		c.Serve.DNSResolvers = []string{dns.addr}
		c.PublicIPs = []string{"127.0.0.1", "::1"}
	})
	pia, _ := b.App.FindAuthRecordByEmail("users", "pia@example.com")
	slug := (strings.Repeat("very-long-", 7) + "site")[:63]
	dep := mustDeploy(t, b.SD, pia, "", slug, "<h1>pia</h1>", "")
	b.SignIn(pia)
	domain := strings.Repeat("averyverylonglabelwithoutbreaks", 2) + ".another-label.custom.test"

	b.Step("a phone's viewport", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	b.Step("open the Domains tab", chromedp.Navigate(b.WebURL+"/account/sites/"+dep.Id+"/domains"), chromedp.WaitVisible(testid("domain-form")))
	b.Step("add a domain",
		chromedp.SendKeys(`[data-testid="domain-input"]`, domain),
		chromedp.Click(testid("domain-add")),
		chromedp.WaitVisible(testid("flash-success")),
	)
	if got := b.Text(testid("flash-success")); !strings.Contains(got, domain+" added") {
		t.Fatalf("flash %q", got)
	}
	if n := b.Count(`[data-testid="domain-row"][data-status="pending"]`); n != 1 {
		t.Fatalf("%d pending domains listed", n)
	}
	if got := b.Text(`[data-testid="domain-record"]:first-child [data-testid="domain-record-value"]`); got != slug+".localhost" {
		t.Errorf("CNAME value %q", got)
	}
	if got := b.Text(testid("domain-reason")); !strings.Contains(got, "no TXT record") {
		t.Errorf("reason %q", got)
	}
	if w, err := chromedp.Run(b.Ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`)); err != nil || w > 390 {
		wide, _ := chromedp.Run(b.Ctx, chromedp.Evaluate[string](`Array.from(document.querySelectorAll("body *")).filter(e => e.getBoundingClientRect().right > 390).map(e => e.tagName + "." + e.className).slice(0, 8).join(", ")`))
		b.Fail("site page with a domain", fmt.Errorf("%d px wide at 390 (too wide: %s) %v", w, wide, err))
	}
	b.Step("check now", chromedp.Click(testid("domain-verify")), chromedp.WaitVisible(testid("flash-error")))
	if got := b.Text(testid("flash-error")); !strings.Contains(got, "is not verified yet: no TXT record") {
		t.Errorf("check flash %q", got)
	}
	b.Step("remove it", chromedp.Click(testid("domain-delete")), chromedp.WaitVisible(testid("flash-success")))
	if n := b.Count(`[data-testid="domain-row"]`); n != 0 {
		t.Fatalf("%d domains after removing", n)
	}
}
