package hooks

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"sitedrop/sites"
)

// TestBrowserProtectedSite drives Chromium through a protected site: the
// gate (401, its own style under its CSP), a wrong password (the error),
// the right one (the site, its script and stylesheet loaded through the
// cookie); the site page shows the share link; a fresh browser context
// opens the share link and lands on the site at its URL without _token.
// The gate and the site page fit a 390 px wide phone.
func TestBrowserProtectedSite(t *testing.T) {
	b := newBrowserEnv(t)
	user := mustUser(t, b.App, "private-owner@example.com", "free", fixtureKey("privateowner"))
	hash, err := sites.HashPassword("let me in please")
	if err != nil {
		t.Fatal(err)
	}
	on := true
	c, err := b.SD.svc.Create(context.Background(), sites.CreateParams{
		Owner: user, Slug: "private-notes",
		Upload: sites.Upload{StorageType: sites.StorageFiles, Files: []sites.File{
			{Path: "index.html", ContentType: "text/html; charset=utf-8", Data: []byte(
				`<!doctype html><html lang="en"><head><title>Notes</title><link rel="stylesheet" href="/site.3f2a1b9c.css">` +
					`<script src="/app.3f2a1b9c.js" defer></script></head><body><h1 id="secret">Secret notes</h1></body></html>`)},
			{Path: "site.3f2a1b9c.css", ContentType: "text/css; charset=utf-8", Data: []byte(`h1 { color: rgb(1, 2, 3); }`)},
			{Path: "app.3f2a1b9c.js", ContentType: "text/javascript; charset=utf-8", Data: []byte(`document.body.dataset.js = "ran";`)},
		}},
		Meta: sites.Metadata{Protect: sites.ProtectionChange{PasswordHash: &hash, Link: &on}},
	})
	if err != nil {
		t.Fatal(err)
	}
	site := b.SiteURL("private-notes")

	res, err := chromedp.Run(b.Ctx, chromedp.NavigateResponse(site))
	if err != nil || res.Status != 401 {
		b.Fail("open the protected site", fmt.Errorf("status %v, %v", res, err))
	}
	b.Step("the gate", chromedp.WaitVisible(testid("gate-password")))
	if s := b.Text(chromedp.CSS("main")); strings.Contains(s, "Secret notes") {
		t.Fatalf("the gate shows the site: %q", s)
	}
	bg, err := chromedp.Run(b.Ctx, chromedp.Evaluate[string](`getComputedStyle(document.querySelector("[data-testid=gate-submit]")).backgroundColor`))
	if err != nil || bg != "rgb(9, 105, 218)" {
		t.Fatalf("the gate's own style is not applied (its CSP?): %q %v", bg, err)
	}
	label, _ := chromedp.Run(b.Ctx, chromedp.Evaluate[string](`document.querySelector("[data-testid=gate-password]").labels[0].textContent`))
	if label != "Password" {
		t.Fatalf("the password field's label: %q", label)
	}

	b.Step("a wrong password",
		chromedp.SendKeys(testid("gate-password"), "not the password"),
		chromedp.Click(testid("gate-submit")),
		chromedp.WaitVisible(testid("gate-error")), Loaded)
	if s := b.Text(testid("gate-error")); !strings.Contains(s, "Wrong password") {
		t.Fatalf("error %q", s)
	}

	b.Step("the right password",
		chromedp.SendKeys(testid("gate-password"), "let me in please"),
		chromedp.Click(testid("gate-submit")),
		chromedp.WaitVisible(chromedp.CSS("#secret")), Loaded)
	if loc := b.Location(); loc != site {
		t.Fatalf("after the gate: at %s, want %s", loc, site)
	}
	assets, err := chromedp.Run(b.Ctx, chromedp.Evaluate[string](`document.body.dataset.js + " " + getComputedStyle(document.getElementById("secret")).color`))
	if err != nil || assets != "ran rgb(1, 2, 3)" {
		t.Fatalf("the site's assets through the cookie: %q %v", assets, err)
	}

	// the owner copies the share link from the site page
	b.SignIn(user)
	b.Step("the site page", chromedp.Navigate(b.WebURL+"/account/sites/"+c.Record.Id+"/settings"), chromedp.WaitVisible(testid("share-url")))
	share := b.Text(testid("share-url"))
	if !strings.HasPrefix(share, site+"?_token=") {
		t.Fatalf("share link %q", share)
	}
	b.Step("a phone's viewport", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	fitsPhone(t, b, b.Ctx, "the site page")

	// a fresh browser context: no cookie; the share link lets it in
	fresh, cancel := chromedp.NewContext(b.Ctx, chromedp.WithNewBrowserContext())
	defer cancel()
	if _, err := chromedp.Run(fresh, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(fresh, chromedp.Navigate(site)); err != nil {
		t.Fatal(err)
	}
	if n, _ := chromedp.Run(fresh, chromedp.Evaluate[int](`document.querySelectorAll("[data-testid=gate-password]").length`)); n != 1 {
		t.Fatal("a fresh browser context is not at the gate")
	}
	fitsPhone(t, b, fresh, "the gate")
	if _, err := chromedp.Run(fresh, chromedp.Navigate(share)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(fresh, chromedp.WaitVisible(chromedp.CSS("#secret"))); err != nil {
		t.Fatal(err)
	}
	loc, _ := chromedp.Run(fresh, chromedp.Location())
	if loc != site || strings.Contains(loc, "_token") {
		t.Fatalf("after the share link: at %s, want %s", loc, site)
	}
}

// fitsPhone fails unless the page in ctx is at most 390 px wide.
func fitsPhone(t *testing.T, b *browserEnv, ctx context.Context, name string) {
	t.Helper()
	w, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
	if err != nil || w > 390 {
		wide, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`Array.from(document.querySelectorAll("body *")).filter(e => e.getBoundingClientRect().right > 390).map(e => e.tagName + "." + e.className).slice(0, 8).join(", ")`))
		b.Fail(name, fmt.Errorf("%d px wide at 390 (%v; too wide: %s)", w, err, wide))
	}
}
