package hooks

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tests"
	"golang.org/x/net/html"

	"sitedrop/sites"
	"sitedrop/sites/abuse"
	"sitedrop/sites/accounts"
	"sitedrop/sites/forms"
)

// TestEveryFormIsPRG: every form of the web pages is POST → 303 → GET, so
// a reload never posts again. The POST routes are enumerated from the
// router itself (a future form cannot escape), the forms from the pages a
// signed-in owner and a signed-out visitor can reach by following links.
// Each form is posted as the page has it (empty required fields filled
// with plausible values), each POST route also empty, signed out and from
// another origin. A page's answer (HTML) to a POST must be a 303, or a
// 4xx page that changed nothing in the database (so re-posting it changes
// nothing either); never a 2xx page, never a 5xx.
func TestEveryFormIsPRG(t *testing.T) {
	dns := startFakeDNS(t)
	tune := func(c *Config) {
		c.Serve.DNSResolvers = []string{dns.addr}
		c.PublicIPs = []string{"127.0.0.1"}
	}
	tmpl, otp := formsTemplate(t, tune)
	app, _ := openApp(t, tmpl, tune)
	defer app.Cleanup()
	mux := newMux(t, app)
	routes := postRoutes(registeredRoutes(t, app))
	if len(routes) < 10 {
		t.Fatalf("%d POST routes found in the router: the walk is broken", len(routes))
	}

	found := crawlForms(t, mux, sessionAlice)
	// signed out, the sign-in's code step too (a code was mailed), and
	// the moderation page's sign-in
	found = append(found, crawlForms(t, mux, "", "/auth/login?otp="+otp+"&next=%2Faccount", "/admin/login")...)
	// signed in to the moderation page as a superuser
	found = append(found, crawlForms(t, mux, adminSessionCookie, "/admin")...)

	// every form as its page has it, each on a fresh copy of the fixtures
	reached := map[string]bool{} // route patterns a form posts to
	for _, f := range found {
		pattern, ok := matchRoute(routes, f.action)
		if !ok {
			t.Errorf("the form of %s posts to %s, which no POST route serves", f.page, f.action)
			continue
		}
		reached[pattern] = true
		app, _ := openApp(t, tmpl, tune)
		mux := newMux(t, app)
		checkPRG(t, app, mux, "form on "+f.page, f.action, f.values.Encode(), f.session, sameOrigin)
		app.Cleanup()
	}

	// every POST route: empty, signed in and out, and from another origin
	crossSite := map[string]string{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site", "Content-Type": "application/x-www-form-urlencoded"}
	pages := map[string]bool{} // routes that answered a page
	for _, pattern := range routes {
		path := examplePath(pattern, found)
		for _, c := range []struct {
			what, session string
			headers       map[string]string
		}{
			{"empty, signed in", sessionAlice, sameOrigin},
			{"empty, signed out", "", sameOrigin},
			{"from another origin", sessionAlice, crossSite},
		} {
			app, _ := openApp(t, tmpl, tune)
			mux := newMux(t, app)
			if checkPRG(t, app, mux, c.what, path, "", c.session, c.headers) {
				pages[pattern] = true
			}
			app.Cleanup()
		}
	}
	// a page route no page has a form for is tried empty only: say so
	for p := range pages {
		if !reached[p] {
			t.Errorf("POST %s answers pages but no form of the pages the walk reaches posts to it: link its page, or it is dead", p)
		}
	}
	for _, must := range []string{"/claim/{slug}", "/account/keys", "/auth/logout", "/auth/login", "/account/sites/{id}/settings",
		"/admin/login", "/admin/sites/{id}/takedown", "/admin/sites/{id}/restore", "/admin/accounts/{id}/ban", "/admin/accounts/{id}/unban",
		"/admin/blocks/{id}/remove", "/admin/anon", "/admin/reports/{id}/dismiss", "/admin/sites/{id}/delete"} {
		if !reached[must] {
			t.Errorf("no form posting to %s was found: the crawl is broken", must)
		}
	}
	t.Logf("%d POST routes, %d forms, %d page routes", len(routes), len(found), len(pages))
}

// adminSessionCookie is the Cookie of the superuser's moderation session
// of formsTemplate.
const adminSessionCookie = "sitedrop_admin=admin-session-of-the-forms-walk-000000000000"

// sessionCookie is the Cookie header of a walk's session: a user's
// session token, or a whole cookie (adminSessionCookie).
func sessionCookie(session string) string {
	if strings.Contains(session, "=") {
		return session
	}
	return "sitedrop_session=" + session
}

// checkPRG posts body to path (session's cookie, headers) and fails the
// test when the answer is a page that is not a 303 or a 4xx that changed
// nothing. It reports whether the answer was a page (HTML) at all.
func checkPRG(t *testing.T, app *tests.TestApp, mux http.Handler, what, path, body, session string, headers map[string]string) bool {
	t.Helper()
	before := dbRecords(t, app)
	req := httptest.NewRequest(http.MethodPost, "http://web.test"+path, strings.NewReader(body))
	req.Host = "web.test"
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Accept", "text/html,application/xhtml+xml")
	if session != "" {
		req.Header.Set("Cookie", sessionCookie(session))
	}
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	res := rec.Result()
	out, _ := io.ReadAll(res.Body)
	ct, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type"))
	page := ct == "text/html" || res.StatusCode == http.StatusSeeOther && ct != "application/json"
	if !page {
		return false // the JSON API: not a page
	}
	switch {
	case res.StatusCode == http.StatusSeeOther:
		if res.Header.Get("Location") == "" {
			t.Errorf("POST %s (%s, body %q): 303 without a Location", path, what, body)
		}
	case res.StatusCode >= 400 && res.StatusCode < 500:
		if changed := dbChanges(before, dbRecords(t, app)); changed != "" {
			t.Errorf("POST %s (%s, body %q): %d page, but the database changed: a reload would post again\n%s", path, what, body, res.StatusCode, changed)
		}
	default:
		t.Errorf("POST %s (%s, body %q): %d page, want 303 (or a 4xx that changes nothing)\n%.400s", path, what, body, res.StatusCode, out)
	}
	return true
}

// dbRecords is every record of every collection as JSON, by collection
// and id, to tell whether a request changed anything (and what); an API
// key's last use (bookkeeping that any request carrying it may refresh) is
// left out.
func dbRecords(t *testing.T, app core.App) map[string]map[string]string {
	t.Helper()
	cols, err := app.FindAllCollections()
	if err != nil {
		t.Fatal(err)
	}
	all := map[string]map[string]string{}
	for _, c := range cols {
		if c.IsView() {
			continue
		}
		recs, err := app.FindAllRecords(c)
		if err != nil {
			t.Fatal(err)
		}
		byID := map[string]string{}
		for _, r := range recs {
			data := r.FieldsData()
			if c.Name == accounts.APIKeysCollection {
				// bookkeeping of any authenticated request, refused or
				// not: refreshed at most once a minute, so a slow run
				// (the race detector on a busy machine) sees it move
				delete(data, accounts.FieldLastUsedAt)
				delete(data, "updated")
			}
			b, _ := json.Marshal(data)
			byID[r.Id] = string(b)
		}
		all[c.Name] = byID
	}
	return all
}

// dbChanges says which records differ between two dbRecords, one line
// each ("" when none does).
func dbChanges(before, after map[string]map[string]string) string {
	var out []string
	for _, col := range slices.Sorted(maps.Keys(mergeKeys(before, after))) {
		b, a := before[col], after[col]
		for _, id := range slices.Sorted(maps.Keys(mergeKeys(b, a))) {
			switch was, is := b[id], a[id]; {
			case was == is:
			case was == "":
				out = append(out, fmt.Sprintf("%s %s added: %.300s", col, id, is))
			case is == "":
				out = append(out, fmt.Sprintf("%s %s deleted: %.300s", col, id, was))
			default:
				out = append(out, fmt.Sprintf("%s %s changed:\n\twas %.300s\n\tis  %.300s", col, id, was, is))
			}
		}
	}
	return strings.Join(out, "\n")
}

// mergeKeys is the union of two maps' keys.
func mergeKeys[V any](a, b map[string]V) map[string]bool {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	return keys
}

// formsTemplate is a data dir with the fixtures and something behind every
// form of alice's site: a submission, a webhook, a custom domain, a second
// browser, a second version; and a sign-in code mailed to alice, whose
// id it returns. It is removed when the test ends.
func formsTemplate(t *testing.T, tune func(*Config)) (string, string) {
	t.Helper()
	app, sd := openApp(t, templates.fixtures(t), tune)
	alice, _ := app.FindAuthRecordByEmail("users", "alice@example.com")
	mustCodeSession(t, app, alice)
	mustSubmission(t, app, idAliceSite, map[string]any{"name": "first"})
	hook := mustWebhook(t, app, idAliceSite, "http://127.0.0.1:9/hook")
	mustDomain(t, app, idAliceSite, "shop.alice.test", false)
	mustFailedDelivery(t, app, hook)
	// a second version, so that the first can be made live again
	rec, err := app.FindRecordById(sites.DeploymentsCollection, idAliceSite)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sd.svc.Replace(t.Context(), rec, sites.Metadata{}, htmlUpload("<p>second</p>")); err != nil {
		t.Fatal(err)
	}
	// a paused site, so that its page offers Resume
	paused, err := sd.svc.Create(t.Context(), sites.CreateParams{Owner: alice, Slug: "alice-paused", Upload: htmlUpload("<p>paused</p>")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sd.svc.SetPaused(context.Background(), paused.Record, true); err != nil {
		t.Fatal(err)
	}
	mustModerationFixtures(t, app, sd)
	otp, _, err := accounts.NewLoginCode(app, "alice@example.com")
	if err != nil {
		t.Fatal(err)
	}
	app.ResetBootstrapState()
	dir := app.DataDir()
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir, otp
}

// mustModerationFixtures gives the moderation page something behind each
// of its forms: a superuser signed in to it (adminSessionCookie), an open
// report of alice-site, and of a site of pia's taken down by her ban (so
// that restore and unban show), and a block.
func mustModerationFixtures(t *testing.T, app core.App, sd *built) {
	t.Helper()
	su := mustSuperuser(t, app, "admin@example.com", "a-long-password")
	col, _ := app.FindCollectionByNameOrId(accounts.AdminSessionsCollection)
	rec := core.NewRecord(col)
	rec.Set("superuser", su.Id)
	rec.Set("token_hash", accounts.HashSecret(strings.TrimPrefix(adminSessionCookie, "sitedrop_admin=")))
	rec.Set("expires_at", time.Now().Add(24*time.Hour).UTC())
	if err := app.Save(rec); err != nil {
		t.Fatal(err)
	}
	pia, _ := accounts.FindUserByEmail(app, "pia@example.com")
	mustDeploy(t, sd, pia, "piasite00000001", "pia-site", "<h1>pia</h1>", "Pia")
	for _, u := range []string{"http://alice-site.sites.test/", "http://pia-site.sites.test/"} {
		if _, err := sd.reports.Open(abuse.NewReport{URL: u, Reason: "phishing", IP: "192.0.2.9"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := sd.svc.Ban(t.Context(), pia, "fraud", su.Email()); err != nil {
		t.Fatal(err)
	}
	if _, err := sd.blocks.Add(t.Context(), sites.BlockEmailDomain, "spam.example", "", su); err != nil {
		t.Fatal(err)
	}
}

// mustFailedDelivery stores a delivery of hook that failed for good (so
// the page offers to send it again).
func mustFailedDelivery(t testing.TB, app core.App, hook *core.Record) {
	t.Helper()
	col, _ := app.FindCollectionByNameOrId(forms.DeliveriesCollection)
	rec := core.NewRecord(col)
	rec.Set("deployment", hook.GetString("deployment"))
	rec.Set("webhook", hook.Id)
	rec.Set("event", forms.EventSubmission)
	rec.Set("url", hook.GetString("url"))
	rec.Set("type", forms.WebhookGeneric)
	rec.Set("secret", "whsec_test")
	rec.Set("payload", `{"event":"submission"}`)
	rec.Set("status", forms.DeliveryFailed)
	rec.Set("attempts", 8)
	rec.Set("last_status", 500)
	rec.Set("last_error", "HTTP 500: receiver broke")
	if err := app.Save(rec); err != nil {
		t.Fatal(err)
	}
}

// postRoutes are the path patterns of the POST routes of registered
// ("METHOD /path", see registeredRoutes), PocketBase's own JSON API
// (/api/) left out.
func postRoutes(registered []string) []string {
	var out []string
	for _, rt := range registered {
		if path, ok := strings.CutPrefix(rt, http.MethodPost+" "); ok && !strings.HasPrefix(path, "/api/") {
			out = append(out, path)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// routeParam matches a path wildcard of a route pattern.
var routeParam = regexp.MustCompile(`\{[^}]*\}`)

// matchRoute is the POST route pattern that serves path.
func matchRoute(patterns []string, path string) (string, bool) {
	mux := http.NewServeMux()
	for _, p := range patterns {
		mux.HandleFunc("POST "+p, func(http.ResponseWriter, *http.Request) {})
	}
	_, p := mux.Handler(httptest.NewRequest(http.MethodPost, path, nil))
	p = strings.TrimPrefix(p, "POST ")
	return p, p != ""
}

// examplePath is a path pattern serves: a form's action when a page has
// one, else the pattern with every wildcard an id that exists nowhere.
func examplePath(pattern string, found []pageForm) string {
	patterns := []string{pattern}
	for _, f := range found {
		if p, ok := matchRoute(patterns, f.action); ok && p == pattern {
			return f.action
		}
	}
	return routeParam.ReplaceAllString(pattern, "nothing00000000")
}

// pageForm is one POST form of a page, with the values it would send.
type pageForm struct {
	page, action, session string
	values                url.Values
}

// crawlForms follows the same-origin links of the pages from the start
// pages and more (signed in with session, or signed out) and returns
// their POST forms, each once (by action and values).
func crawlForms(t *testing.T, mux http.Handler, session string, more ...string) []pageForm {
	t.Helper()
	queue := append([]string{"/", "/account", "/auth/login", "/claim/anon-site?token=" + url.QueryEscape(anonToken)}, more...)
	seen := map[string]bool{}
	actions := map[string]bool{}
	var out []pageForm
	for len(queue) > 0 && len(seen) < 80 {
		page := queue[0]
		queue = queue[1:]
		if seen[page] {
			continue
		}
		seen[page] = true
		req := httptest.NewRequest(http.MethodGet, "http://web.test"+page, nil)
		req.Host = "web.test"
		req.Header.Set("Accept", "text/html")
		if session != "" {
			req.Header.Set("Cookie", sessionCookie(session))
		}
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		if ct := rec.Header().Get("Content-Type"); rec.Code != http.StatusOK || !strings.HasPrefix(ct, "text/html") {
			continue
		}
		doc, err := html.Parse(rec.Body)
		if err != nil {
			t.Fatalf("parse %s: %v", page, err)
		}
		links, forms := linksAndForms(doc)
		for _, l := range links {
			u, err := url.Parse(l)
			if err != nil || u.Host != "" || u.Scheme != "" || !strings.HasPrefix(u.Path, "/") ||
				strings.HasPrefix(u.Path, "/static/") || strings.HasPrefix(u.Path, "/api/") || strings.HasPrefix(u.Path, "/_/") ||
				strings.HasSuffix(u.Path, ".csv") || strings.HasSuffix(u.Path, ".txt") {
				continue
			}
			u.Fragment = ""
			queue = append(queue, u.String())
		}
		for _, f := range forms {
			key := session + " " + f.action + "?" + f.values.Encode()
			if actions[key] {
				continue
			}
			actions[key] = true
			f.page, f.session = page, session
			out = append(out, f)
		}
	}
	return out
}

// plausible fills an empty field a person must type into.
var plausible = map[string]string{
	"email":    "alice@example.com",
	"code":     "00000000",
	"domain":   "www.alice.test",
	"slug":     "alice-site",
	"url":      "http://127.0.0.1:9/hook",
	"name":     "laptop",
	"password": "correct horse battery staple",
	"reason":   "phishing",
	"value":    "blocked.example",
}

// linksAndForms are the hrefs of a page's links and its POST forms.
func linksAndForms(doc *html.Node) ([]string, []pageForm) {
	var links []string
	var forms []pageForm
	attr := func(n *html.Node, key string) (string, bool) {
		for _, a := range n.Attr {
			if a.Key == key {
				return a.Val, true
			}
		}
		return "", false
	}
	var inForm func(n *html.Node, v url.Values)
	inForm = func(n *html.Node, v url.Values) {
		if n.Type == html.ElementNode {
			name, _ := attr(n, "name")
			switch n.Data {
			case "input":
				typ, _ := attr(n, "type")
				val, _ := attr(n, "value")
				_, checked := attr(n, "checked")
				switch {
				case name == "":
				case typ == "checkbox" || typ == "radio":
					if checked {
						v.Add(name, cmp.Or(val, "on"))
					}
				case typ == "submit" || typ == "button" || typ == "file":
				default:
					if val == "" {
						val = plausible[name]
					}
					v.Add(name, val)
				}
			case "textarea":
				if name != "" && n.FirstChild != nil {
					v.Add(name, n.FirstChild.Data)
				}
			case "button":
				if val, ok := attr(n, "value"); ok && name != "" && v.Get(name) == "" {
					v.Add(name, val)
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			inForm(c, v)
		}
	}
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "a":
				if h, ok := attr(n, "href"); ok {
					links = append(links, h)
				}
			case "form":
				method, _ := attr(n, "method")
				action, _ := attr(n, "action")
				if strings.EqualFold(method, "post") {
					v := url.Values{}
					inForm(n, v)
					forms = append(forms, pageForm{action: action, values: v})
				}
				return
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return links, forms
}
