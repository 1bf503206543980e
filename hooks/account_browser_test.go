package hooks

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"sitedrop/sites/accounts"
)

// TestBrowserSignInWithoutJS signs in with JavaScript off: the e-mail
// form, the code from the mail (over SMTP), and back to next.
func TestBrowserSignInWithoutJS(t *testing.T) {
	b := newBrowserEnv(t)
	rcv := newSMTPReceiver(t)
	useRealSMTP(t, b.App, rcv)
	if _, err := chromedp.Call(b.Ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		b.Fail("disable JavaScript", err)
	}
	const email = "no.script@example.com"
	b.Step("open the sign-in page, going on to the account page",
		chromedp.Navigate(b.WebURL+"/auth/login?next="+url.QueryEscape("/account")),
		chromedp.WaitVisible(testid("email-input")),
	)
	if n := b.Count(`[data-testid="code-form"]:not([hidden])`); n != 0 {
		t.Fatal("the code form shows before a code was sent")
	}
	b.Step("ask for a code",
		chromedp.SendKeys(testid("email-input"), email),
		chromedp.Click(testid("send-code")),
		chromedp.WaitVisible(testid("code-input")),
	)
	if loc := b.Location(); !strings.Contains(loc, "/auth/login?otp=") {
		t.Fatalf("after the e-mail form the browser is at %s", loc)
	}
	_, code := loginCodeFrom(t, rcv, email)
	b.Step("a wrong code is refused, the form stays",
		chromedp.SendKeys(testid("code-input"), "00000000"),
		chromedp.Click(testid("verify-code")),
		chromedp.WaitVisible(testid("login-error")),
	)
	if s := b.Text(testid("login-error")); !strings.Contains(s, msgInvalidCode) && code != "00000000" {
		t.Fatalf("wrong code says %q", s)
	}
	b.Step("enter the code",
		chromedp.SendKeys(testid("code-input"), code),
		chromedp.Click(testid("verify-code")),
		chromedp.WaitVisible(testid("session-row")),
	)
	if loc := b.Location(); loc != b.WebURL+"/account" {
		t.Fatalf("signed in at %s, want the account page", loc)
	}
	if s := b.Text(testid("this-browser")); s != "This browser" {
		t.Fatalf("this browser's session: %q", s)
	}
}

// TestBrowserAccountSessionsAndKeys: another browser's session is revoked
// with one button; a reload after creating a key shows it no more and
// makes no second key; this browser's row signs it out, to the sign-in
// page saying so, its e-mail field focused.
func TestBrowserAccountSessionsAndKeys(t *testing.T) {
	b := newBrowserEnv(t)
	alice, _ := b.App.FindAuthRecordByEmail("users", "alice@example.com")
	b.SignIn(alice)
	mustCodeSession(t, b.App, alice)

	b.Step("open the account page", chromedp.Navigate(b.WebURL+"/account"), chromedp.WaitVisible(testid("this-browser")))
	// the fixture's session of alice, this browser's, the code sign-in's
	if n := b.Count(`[data-testid="session-row"]`); n != 3 {
		t.Fatalf("%d signed-in browsers listed, want 3", n)
	}
	b.Step("revoke the other browser",
		chromedp.Click(`li.session:not(.current) [data-testid="revoke-session"]`),
		chromedp.WaitVisible(testid("flash-success")),
	)
	if n := b.Count(`[data-testid="session-row"]`); n != 2 {
		t.Fatalf("%d browsers after revoking one, want 2", n)
	}

	keys := func() int {
		ks, err := accounts.ListAPIKeys(b.App, alice)
		if err != nil {
			t.Fatal(err)
		}
		return len(ks)
	}
	before := keys()
	b.Step("create a key",
		chromedp.SendKeys("#key-name", "phone"),
		chromedp.Click(testid("create-key")),
		chromedp.WaitVisible(testid("flash-secret")),
	)
	secret := b.Text(testid("flash-secret"))
	if !strings.HasPrefix(secret, accounts.APIKeyPrefix) || keys() != before+1 {
		t.Fatalf("new key %q, %d keys (was %d)", secret, keys(), before)
	}
	if loc := b.Location(); loc != b.WebURL+"/account" {
		t.Fatalf("after the post the browser is at %s, want the account page (303)", loc)
	}
	b.Step("reload", chromedp.Reload(), chromedp.WaitVisible(testid("create-key")))
	if n := b.Count(`[data-testid="flash-secret"]`); n != 0 || keys() != before+1 {
		t.Fatalf("after a reload: %d secrets shown, %d keys (want 0 and %d)", n, keys(), before+1)
	}

	b.Step("sign this browser out from its row",
		chromedp.Click(`li.session.current [data-testid="sign-out"]`),
		chromedp.WaitVisible(testid("signed-out")),
		chromedp.WaitVisible(testid("email-input")),
	)
	if loc := b.Location(); loc != b.WebURL+"/auth/login?signed_out=1" {
		t.Fatalf("after signing out the browser is at %s", loc)
	}
	// the sign-in page's e-mail field has the focus (autofocus)
	if id, err := chromedp.Run(b.Ctx, chromedp.Evaluate[string](`document.activeElement && document.activeElement.id`)); err != nil || id != "email" {
		t.Fatalf("focus on %q (%v), want the e-mail field", id, err)
	}
	if _, err := accounts.UserBySession(b.App, "browser-session-"+alice.Id); err == nil {
		t.Fatal("still signed in")
	}
}

// TestBrowserMobileNoOverflow loads every page with long addresses, slugs,
// titles and URLs in a 390 px wide viewport: none scrolls sideways.
func TestBrowserMobileNoOverflow(t *testing.T) {
	b := newBrowserEnv(t)
	long := strings.Repeat("very-long-", 5) + "x"
	email := "someone." + strings.Repeat("verylongname", 4) + "@" + strings.Repeat("subdomain-", 5) + "example.com"
	user := mustUser(t, b.App, email, "free", fixtureKey("mobile"))
	slug := (long + "-" + long)[:63]
	title := strings.Repeat("Averyveryverylongtitlewithoutspaces", 3)
	mustDeploy(t, b.SD, user, "", slug, "<h1>x</h1>", title)
	mustDeploy(t, b.SD, user, "", "short", "<h1>x</h1>", "A title with words that wraps nicely on a phone")
	anonSlug := "anon-" + strings.TrimRight(slug[:50], "-")
	const token = "claim-token-of-the-mobile-test"
	mustAnon(t, b.SD, "", anonSlug, token, time.Now().Add(time.Hour))
	if _, _, err := accounts.CreateAPIKey(context.Background(), b.App, user, strings.Repeat("k", maxKeyNameLen)); err != nil {
		t.Fatal(err)
	}
	mustCodeSession(t, b.App, user)

	b.Step("a phone's viewport", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	measure := func(name string) {
		t.Helper()
		w, err := chromedp.Run(b.Ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
		if err != nil {
			b.Fail("measure "+name, err)
		}
		if w > 390 {
			wide, _ := chromedp.Run(b.Ctx, chromedp.Evaluate[string](`Array.from(document.querySelectorAll("body *")).filter(e => e.getBoundingClientRect().right > 390).map(e => e.tagName + "." + e.className).slice(0, 8).join(", ")`))
			b.Fail(name, fmt.Errorf("%d px wide at 390 (too wide: %s)", w, wide))
		}
	}
	check := func(name, path string) {
		t.Helper()
		b.Step("open "+name, chromedp.Navigate(b.WebURL+path), chromedp.WaitVisible(chromedp.CSS("main")))
		measure(name)
	}
	next := "/claim/" + anonSlug + "?token=" + token
	check("home, signed out", "/")
	check("login", "/auth/login?next="+url.QueryEscape(next))
	check("claim, signed out", next)
	check("error page", "/claim/"+anonSlug+"?token=wrong-"+long)
	check("404 page", "/"+long+"/"+long+long)
	b.SignIn(user)
	check("home, signed in", "/")
	check("account", "/account")
	check("claim, signed in", next)
	sessions := liveSessions(t, b.App, email)
	check("session revoke", "/account/sessions/"+sessions[0].Id+"/revoke")
	b.Step("create a key", chromedp.Navigate(b.WebURL+"/account"), chromedp.Click(testid("create-key")), chromedp.WaitVisible(testid("flash-secret")))
	measure("account with a new key")
}

// rowSlugs are the slugs of the account page's site rows, in order.
func (b *browserEnv) rowSlugs() string {
	b.t.Helper()
	s, err := chromedp.Run(b.Ctx, chromedp.Evaluate[string](`Array.from(document.querySelectorAll('[data-testid="deployment-row"] code')).map(c => c.textContent).join(" ")`))
	if err != nil {
		b.Fail("read the site rows", err)
	}
	return s
}

// TestBrowserSiteListSearchWithoutJS searches and sorts twelve sites with
// JavaScript off: the form's GET puts both in the address, which a reload
// keeps; each site shows its state and last deploy.
func TestBrowserSiteListSearchWithoutJS(t *testing.T) {
	b := newBrowserEnv(t)
	pia := mustFindUser(t, b.App, "pia@example.com")
	mustTwelveSites(t, b.App, b.SD, pia)
	b.SignIn(pia)
	if _, err := chromedp.Call(b.Ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		b.Fail("disable JavaScript", err)
	}
	b.Step("open the account page", chromedp.Navigate(b.WebURL+"/account"), chromedp.WaitVisible(testid("site-search")))
	if got := b.rowSlugs(); !strings.HasPrefix(got, "cherry nectarine mango") || strings.Count(got, " ") != 11 {
		t.Fatalf("rows %q, want twelve, the last deployed (cherry) first", got)
	}
	if n := b.Count(`#site-list[data-refresh] [data-testid="site-state"].badge.live`); n != 12 {
		t.Fatalf("%d live badges in #site-list, want 12", n)
	}
	if s := b.Text(`[data-testid="deployment-row"]:first-child [data-testid="site-deployed"]`); s != "Deployed just now" {
		t.Fatalf("cherry's last deploy reads %q", s)
	}

	b.Step("search for lemon",
		chromedp.SendKeys(testid("site-search"), "lemon"),
		chromedp.Click(testid("site-find-apply")),
		chromedp.WaitVisible(testid("site-count")),
	)
	if loc := b.Location(); loc != b.WebURL+"/account?q=lemon&sort=deployed" {
		t.Fatalf("after the search the browser is at %s", loc)
	}
	if got := b.rowSlugs(); got != "lemon" {
		t.Fatalf("rows %q for lemon", got)
	}

	b.Step("sort all by name",
		chromedp.Navigate(b.WebURL+"/account"),
		chromedp.WaitVisible(testid("site-sort")),
		chromedp.SetValue(testid("site-sort"), "name"),
		chromedp.Click(testid("site-find-apply")),
		chromedp.WaitReady(`option[value="name"][selected]`),
	)
	want := "nectarine banana cherry damson elder fig grape kiwi lemon mango honeydew apple"
	if got := b.rowSlugs(); got != want {
		t.Fatalf("by name: %q, want %q", got, want)
	}
	b.Step("reload", chromedp.Reload(), chromedp.WaitReady(`option[value="name"][selected]`))
	if got := b.rowSlugs(); got != want {
		t.Fatalf("by name after a reload: %q", got)
	}
}

// TestBrowserAccountDeletion, with JavaScript off: revoking a key asks
// first; deleting the account shows what goes, a wrong address deletes
// nothing, the right one deletes it all, signs the browser out and lands
// on the home page with a message; the site is gone.
func TestBrowserAccountDeletion(t *testing.T) {
	b := newBrowserEnv(t)
	alice := mustFindUser(t, b.App, "alice@example.com")
	b.SignIn(alice)
	old, _, err := accounts.CreateAPIKey(context.Background(), b.App, alice, "old laptop")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(b.Ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		b.Fail("disable JavaScript", err)
	}
	b.Step("revoke the old laptop's key: a question first",
		chromedp.Navigate(b.WebURL+"/account"),
		chromedp.Click(`[data-testid="revoke-key"][aria-label^="Revoke key old laptop"]`),
		chromedp.WaitVisible(testid("confirm-revoke-key")),
	)
	if _, err := accounts.UserByAPIKey(b.App, old); err != nil {
		t.Fatal("the key was revoked before the question was answered")
	}
	b.Step("confirm", chromedp.Click(testid("confirm-revoke-key")), chromedp.WaitVisible(testid("flash-success")))
	if _, err := accounts.UserByAPIKey(b.App, old); err == nil {
		t.Fatal("the key still works")
	}
	b.Step("ask to delete the account",
		chromedp.Click(testid("account-delete")),
		chromedp.WaitVisible(testid("account-delete-email")),
	)
	if s := b.Text(testid("account-delete-list")); !strings.Contains(s, "1 site,") || !strings.Contains(s, "signed-in browser") {
		t.Fatalf("the page says %q", s)
	}
	b.Step("type another address",
		chromedp.SendKeys(testid("account-delete-email"), "bob@example.com"),
		chromedp.Click(testid("account-delete-confirm")),
		chromedp.WaitVisible(testid("flash-error")),
	)
	if loc := b.Location(); loc != b.WebURL+"/account/delete" {
		t.Fatalf("after a wrong address the browser is at %s", loc)
	}
	if _, err := b.App.FindRecordById("users", alice.Id); err != nil {
		t.Fatal("deleted with a wrong address")
	}
	b.Step("type the account's address",
		chromedp.SendKeys(testid("account-delete-email"), "alice@example.com"),
		chromedp.Click(testid("account-delete-confirm")),
		chromedp.WaitVisible(testid("flash-success")),
	)
	if loc := b.Location(); loc != b.WebURL+"/?account=deleted" {
		t.Fatalf("after the deletion the browser is at %s", loc)
	}
	if s := b.Text(testid("flash-success")); !strings.Contains(s, "Your account was deleted") {
		t.Fatalf("the home page says %q", s)
	}
	if n := b.Count(`[data-testid="nav-account"]`); n != 0 {
		t.Fatal("still signed in after the deletion")
	}
	if _, err := b.App.FindRecordById("users", alice.Id); err == nil {
		t.Fatal("the account is still there")
	}
	b.Step("open the deleted site", chromedp.Navigate(b.SiteURL("alice-site")), chromedp.WaitVisible(chromedp.CSS("body")))
	if s := b.Text(chromedp.CSS("body")); strings.Contains(s, "alice") {
		t.Fatalf("the deleted site still answers: %q", s)
	}
	b.Step("the account page asks to sign in", chromedp.Navigate(b.WebURL+"/account"), chromedp.WaitVisible(testid("email-input")))
}
