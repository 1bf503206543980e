package hooks

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/pocketbase/pocketbase/tests"

	"sitedrop/sites"
	"sitedrop/ui"
)

// TestSitePageVersionsPreviews: the site page's versions show each one's
// message (escaped), preview link and aliases, Promote for a draft and
// Make live for an earlier version, and a Changes link for each version
// but the oldest; ?changes=N shows what N adds, changes and removes
// against the kept version before it, a page of its own; Promote makes
// the draft live and leaves its alias.
func TestSitePageVersionsPreviews(t *testing.T) {
	t.Parallel()
	page := "/account/sites/" + idAliceSite
	withDraft := func(t testing.TB) *tests.TestApp {
		app, sd := newFixtureApp(t)
		rec, err := app.FindRecordById(sites.DeploymentsCollection, idAliceSite)
		if err != nil {
			t.Fatal(err)
		}
		if rec, err = sd.svc.Replace(t.Context(), rec, sites.Metadata{}, htmlUpload("<p>second</p>")); err != nil {
			t.Fatal(err)
		}
		draft := htmlUpload("<p>third, a longer page</p>")
		draft.Files = append(draft.Files, sites.File{Path: "new.txt", ContentType: "text/plain; charset=utf-8", Data: []byte("hello")})
		draft.Release = sites.Release{Draft: true, Alias: "staging", Message: "New <b>look</b>"}
		if _, err := sd.svc.Replace(t.Context(), rec, sites.Metadata{}, draft); err != nil {
			t.Fatal(err)
		}
		return app
	}
	serves := func(host, want string) func(testing.TB, *tests.TestApp, *http.Response) {
		return func(t testing.TB, app *tests.TestApp, _ *http.Response) {
			if _, b := siteGet(t, app, host, "/"); !strings.Contains(b, want) {
				t.Fatalf("%s serves %q, want %q", host, b, want)
			}
		}
	}
	aliasStays := func(t testing.TB, app *tests.TestApp, _ *http.Response) {
		v, err := sites.FindAliasVersion(app, idAliceSite, "staging")
		if err != nil || v.GetInt(sites.FieldVersionNumber) != 3 {
			t.Fatalf("the alias moved: %v %v", v, err)
		}
	}
	runScenarios(t, []tests.ApiScenario{
		{
			Name: "each version's message, preview, aliases and button", Method: http.MethodGet, URL: page + "/deploys", Headers: cookie(sessionAlice),
			ExpectedStatus: 200,
			ExpectedContent: []string{
				`<strong>Version 3</strong>`,
				`<span class="version-message" data-testid="version-message">New &lt;b&gt;look&lt;/b&gt;</span>`,
				`Preview: <a href="http://v3--alice-site.sites.test/" data-testid="version-preview">v3--alice-site.sites.test</a>`,
				`Aliases:  <a href="http://staging--alice-site.sites.test/" data-testid="version-alias">staging</a>`,
				`aria-label="Promote version 3: make it live">Promote</button>`,
				`aria-label="Make version 1 live">Make live</button>`,
				`href="http://v1--alice-site.sites.test/"`,
				`<a href="/account/sites/` + idAliceSite + `/deploys?changes=3#changes-h" data-testid="version-changes" aria-label="Changes in version 3 since version 2">Changes</a>`,
				`?changes=2#changes-h"`,
			},
			NotExpectedContent: []string{`New <b>look`, `?changes=1#`, `data-testid="version-changes-panel"`, `aria-label="Promote version 1`},
			TestAppFactory:     withDraft,
			AfterTestFunc:      serves("alice-site.sites.test", "second"), // the draft is not live
		},
		{
			Name: "a version's changes against the one before it", Method: http.MethodGet, URL: page + "/deploys?changes=3", Headers: cookie(sessionAlice),
			ExpectedStatus: 200,
			ExpectedContent: []string{
				`<h3 id="changes-h">Changes in version 3 since version 2</h3>`,
				`<p data-testid="changes-summary">1 added, 1 changed, 0 removed.</p>`,
				`<h4 id="changes-added-h">Added</h4><ul class="change-list" aria-labelledby="changes-added-h" data-testid="changes-added"><li><code class="long">new.txt</code> <span class="muted">5 B</span></li></ul>`,
				`data-testid="changes-changed"><li><code class="long">index.html</code> <span class="muted">`,
				` → `,
			},
			NotExpectedContent: []string{`data-testid="changes-removed"`},
			TestAppFactory:     withDraft,
		},
		{
			Name: "the oldest version has nothing to compare with", Method: http.MethodGet, URL: page + "/deploys?changes=1", Headers: cookie(sessionAlice),
			ExpectedStatus: 200, ExpectedContent: []string{`<p data-testid="changes-none">Version 1 is the oldest kept`},
			TestAppFactory: withDraft,
		},
		{
			Name: "a version not kept", Method: http.MethodGet, URL: page + "/deploys?changes=x9", Headers: cookie(sessionAlice),
			ExpectedStatus: 200, ExpectedContent: []string{`<p data-testid="changes-none">No changes to show: that version is not kept.</p>`},
			TestAppFactory: withDraft,
		},
		{
			Name: "the one-page site's link to a version's changes goes on to the Deploys tab", Method: http.MethodGet,
			URL: page + "?changes=3", Headers: cookie(sessionAlice), ExpectedStatus: 303, TestAppFactory: withDraft,
			AfterTestFunc: wantLocation(page + "/deploys?changes=3#changes-h"),
		},
		{
			Name: "promote the draft", Method: http.MethodPost, URL: page + "/rollback",
			Body: formBody("version", "3"), Headers: withHeaders(sameOrigin, cookie(sessionAlice)),
			ExpectedStatus: 303, TestAppFactory: withDraft,
			AfterTestFunc: checks(wantLocation(page+"/deploys#versions"), wantFlash(ui.FlashSuccess, "Version 3 is live."), serves("alice-site.sites.test", "third"), aliasStays),
		},
	})
}

// TestBrowserSiteVersions: on a phone's 390 px, a site page with a long
// slug, a long message and alias, and the changes of a version with long
// paths does not scroll sideways; Promote makes the draft live in a
// real browser (a form post, no script needed).
func TestBrowserSiteVersions(t *testing.T) {
	b := newBrowserEnv(t)
	user := mustUser(t, b.App, "versions@example.com", "free", fixtureKey("versions"))
	slug := strings.Repeat("longslug-", 5) + "site" // 49 characters: its previews still have hosts
	dep := mustDeploy(t, b.SD, user, "", slug, "<h1>one</h1>", "Versions")
	draft := htmlUpload("<h1>two</h1>")
	long := strings.Repeat("averyveryverylongpathsegment", 4)
	draft.Files = append(draft.Files, sites.File{Path: long + "/" + long + ".txt", ContentType: "text/plain; charset=utf-8", Data: []byte("x")})
	draft.Release = sites.Release{Draft: true, Alias: strings.Repeat("a", 32), Message: strings.Repeat("Averyverylongwordinamessage", 7)}
	if _, err := b.SD.svc.Replace(t.Context(), dep, sites.Metadata{}, draft); err != nil {
		t.Fatal(err)
	}
	b.SignIn(user)
	b.Step("a phone's viewport", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	b.Step("open the changes of version 2", chromedp.Navigate(b.WebURL+"/account/sites/"+dep.Id+"?changes=2"), chromedp.WaitVisible(testid("version-changes-panel")))
	if got := b.Text(testid("changes-summary")); got != "1 added, 1 changed, 0 removed." {
		t.Errorf("changes summary %q", got)
	}
	w, err := chromedp.Run(b.Ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
	if err != nil || w > 390 {
		wide, _ := chromedp.Run(b.Ctx, chromedp.Evaluate[string](`Array.from(document.querySelectorAll("body *")).filter(e => e.getBoundingClientRect().right > 390).map(e => e.tagName + "." + e.className).slice(0, 8).join(", ")`))
		t.Fatalf("the site page is %d px wide at 390 (%v; too wide: %s)", w, err, wide)
	}
	// The newest row (version 2) has a live marker only once the page
	// after the post has loaded: waiting for any marker would find version
	// 1's on the page before it.
	firstLive := chromedp.CSS(`[data-testid="version-row"]:first-child [data-testid="version-live"]`)
	b.Step("promote version 2", chromedp.Click(chromedp.CSS(`button[aria-label="Promote version 2: make it live"]`)), chromedp.WaitVisible(firstLive))
	if got := b.Text(firstLive); got != "Live" {
		t.Errorf("version 2 is not marked live after Promote: %q", got)
	}
	if _, body := siteGet(t, b.App, slug+".localhost", "/"); !strings.Contains(body, "<h1>two</h1>") {
		t.Errorf("the site after Promote: %q", body)
	}
}
