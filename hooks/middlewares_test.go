package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/apis"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tests"
	"github.com/pocketbase/pocketbase/tools/logger"
)

// newServedMux is newMux with the global CORS middleware that apis.Serve
// binds before OnServe (PocketBase's default, "*"), as in production.
func newServedMux(t testing.TB, app *tests.TestApp) http.Handler {
	t.Helper()
	return newMux(t, app, apis.CORS(apis.CORSConfig{AllowOrigins: []string{"*"}}))
}

func TestCrossOriginDeploys(t *testing.T) {
	t.Parallel()
	app, _ := newFixtureApp(t)
	mux := newServedMux(t, app)
	const (
		web  = "http://web.test"
		evil = "https://evil.example"
	)
	for _, c := range []struct {
		name    string
		method  string
		path    string
		slug    string // of a deploy
		headers map[string]string
		status  int
		acao    string // Access-Control-Allow-Origin wanted ("" none)
		// contains is in the body; created: the deploy made its slug
		contains string
		created  bool
	}{
		{
			name: "a page on another origin cannot deploy anonymously (simple text/plain POST)", method: "POST", path: "/deploy",
			slug:    "cross-site-page",
			headers: map[string]string{"Origin": evil, "Sec-Fetch-Site": "cross-site", "Content-Type": "text/plain"},
			status:  403, contains: errBody(msgCrossOriginAnonDeploy),
		},
		{
			name: "nor without Sec-Fetch-Site (Origin against Host)", method: "POST", path: "/deploy",
			slug:    "cross-origin-page",
			headers: map[string]string{"Origin": evil, "Content-Type": "text/plain"},
			status:  403, contains: errBody(msgCrossOriginAnonDeploy),
		},
		{
			name: "nor from a site host of the same site", method: "POST", path: "/deploy",
			slug:    "same-site-page",
			headers: map[string]string{"Origin": "http://alice-site.sites.test", "Sec-Fetch-Site": "same-site"},
			status:  403, contains: errBody(msgCrossOriginAnonDeploy),
		},
		{
			name: "curl and scripts (no Origin) deploy anonymously", method: "POST", path: "/deploy",
			slug: "curl-page", status: 200, created: true,
		},
		{
			name: "the web host's own pages deploy anonymously", method: "POST", path: "/deploy",
			slug:    "own-page",
			headers: map[string]string{"Origin": web, "Sec-Fetch-Site": "same-origin"},
			status:  200, created: true,
		},
		{
			name: "a typed-in request (Sec-Fetch-Site: none) deploys", method: "POST", path: "/deploy",
			slug:    "typed-page",
			headers: map[string]string{"Sec-Fetch-Site": "none"},
			status:  200, created: true,
		},
		{
			name: "a page on another origin deploys with a key, and reads the answer", method: "POST", path: "/deploy",
			slug:    "keyed-page",
			headers: withHeaders(bearer(keyAlice), map[string]string{"Origin": evil, "Sec-Fetch-Site": "cross-site"}),
			status:  200, acao: "*", created: true,
		},
		{
			name: "its preflight allows the Authorization header", method: "OPTIONS", path: "/deploy",
			headers: map[string]string{"Origin": evil, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization,content-type"},
			status:  204, acao: "*",
		},
		{
			name: "a preflight without a key gets no CORS", method: "OPTIONS", path: "/deploy",
			headers: map[string]string{"Origin": evil, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"},
			status:  204,
		},
		{
			name: "a keyed request's errors are readable too", method: "GET", path: "/deploy/nope00000000000",
			headers: withHeaders(bearer(keyAlice), map[string]string{"Origin": evil}),
			status:  404, acao: "*",
		},
		{
			name: "no CORS for keyless requests to sitedrop's routes", method: "GET", path: "/deploys",
			headers: map[string]string{"Origin": evil},
			status:  401,
		},
		{
			name: "form endpoints stay open: their own preflight", method: "OPTIONS", path: "/submit/" + idAliceSite,
			headers: map[string]string{"Origin": evil, "Access-Control-Request-Method": "POST"},
			status:  204, acao: "*",
		},
		{
			name: "PocketBase's API keeps its --origins", method: "GET", path: "/api/health",
			headers: map[string]string{"Origin": evil},
			status:  200, acao: "*",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			var reqBody string
			if c.slug != "" {
				reqBody = `{"html":"<h1>hi</h1>","slug":"` + c.slug + `"}`
			}
			res, body := do(t, mux, c.method, web+c.path, reqBody, c.headers)
			if res.StatusCode != c.status || !strings.Contains(body, c.contains) {
				t.Fatalf("%d %q, want %d with %q", res.StatusCode, body, c.status, c.contains)
			}
			if got := res.Header.Get("Access-Control-Allow-Origin"); got != c.acao {
				t.Fatalf("Access-Control-Allow-Origin %q, want %q", got, c.acao)
			}
			if c.method == "OPTIONS" && c.acao != "" && c.path == "/deploy" {
				if h := strings.ToLower(res.Header.Get("Access-Control-Allow-Headers")); !strings.Contains(h, "authorization") {
					t.Fatalf("Access-Control-Allow-Headers %q", h)
				}
			}
			if c.slug != "" {
				_, err := app.FindFirstRecordByData("deployments", "slug", c.slug)
				if created := err == nil; created != c.created {
					t.Fatalf("deployment %s created: %v, want %v", c.slug, created, c.created)
				}
			}
		})
	}
}

// Secrets in URLs (claim tokens, codes, keys) never reach the request log
// (_logs), neither in the URL nor in the Referer; the handlers still read
// them.
func TestRequestLogRedactsSecrets(t *testing.T) {
	t.Parallel()
	app, _ := newFixtureApp(t)
	app.Settings().Logs.MaxDays = 7 // request logs are off in tests
	mux := newServedMux(t, app)
	claim := "/claim/anon-site?token=" + url.QueryEscape(anonToken)
	secrets := []string{anonToken, "c0de5ecret", "sd_keysecret", "0tp5ecret", "pa55word", "5ig5ecret"}
	requests := []struct {
		method, target string
		headers        map[string]string
		status         int
		// url and referer are what the log must hold
		url, referer string
	}{
		{"GET", claim + "&lang=en", nil, 200, "/claim/anon-site?token=REDACTED&lang=en", ""},
		{"GET", "/claim/anon-site?lang=en&TOKEN=c0de5ecret", nil, 400, "/claim/anon-site?lang=en&TOKEN=REDACTED", ""},
		{"POST", "/claim/anon-site", withHeaders(cookie(sessionBob), sameOrigin, map[string]string{"Referer": "http://web.test" + claim}),
			400, "/claim/anon-site", "http://web.test/claim/anon-site?token=REDACTED"},
		{"GET", "/auth/login?next=%2Faccount&code=c0de5ecret&api_key=sd_keysecret&otp=0tp5ecret&claim_token=" + anonToken, nil, 200,
			"/auth/login?next=%2Faccount&code=REDACTED&api_key=REDACTED&otp=REDACTED&claim_token=REDACTED", ""},
		{"GET", "/api/health?password=pa55word&key=sd_keysecret&sig=5ig5ecret&x", nil, 200, "/api/health?password=REDACTED&key=REDACTED&sig=REDACTED&x", ""},
	}
	for _, r := range requests {
		res, body := do(t, mux, r.method, "http://web.test"+r.target, "", r.headers)
		if res.StatusCode != r.status {
			t.Fatalf("%s %s: %d %q", r.method, r.target, res.StatusCode, body)
		}
	}
	if res, body := do(t, mux, "GET", "http://web.test"+claim, "", cookie(sessionBob)); !strings.Contains(body, `value="`+anonToken+`"`) {
		t.Fatalf("the claim page no longer reads its token: %d", res.StatusCode)
	}
	logs := waitForRequestLogs(t, app, len(requests)+1)
	byURL := map[string]*core.Log{}
	for _, l := range logs {
		raw, _ := json.Marshal(l)
		for _, s := range secrets {
			if strings.Contains(string(raw), s) {
				t.Errorf("log holds secret %q: %s", s, raw)
			}
		}
		byURL[fmt.Sprint(l.Data["method"])+" "+fmt.Sprint(l.Data["url"])] = l
	}
	for _, r := range requests {
		l := byURL[r.method+" "+r.url]
		if l == nil {
			t.Errorf("no log of %s %s", r.method, r.url)
			continue
		}
		if got := fmt.Sprint(l.Data["referer"]); got != r.referer {
			t.Errorf("%s referer %q, want %q", r.url, got, r.referer)
		}
	}
}

// waitForRequestLogs flushes the app's log writer until _logs holds n
// request rows (the activity logger adds them from a goroutine).
func waitForRequestLogs(t testing.TB, app *tests.TestApp, n int) []*core.Log {
	t.Helper()
	bh, ok := app.Logger().Handler().(*logger.BatchHandler)
	if !ok {
		t.Fatalf("log handler %T", app.Logger().Handler())
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if err := bh.WriteAll(context.Background()); err != nil {
			t.Fatal(err)
		}
		var logs []*core.Log
		err := app.LogQuery().AndWhere(dbx.NewExp(`json_extract(data, '$.type') = 'request'`)).All(&logs)
		if err != nil {
			t.Fatal(err)
		}
		if len(logs) >= n || time.Now().After(deadline) {
			if len(logs) < n {
				t.Fatalf("%d request logs, want %d", len(logs), n)
			}
			return logs
		}
		time.Sleep(20 * time.Millisecond)
	}
}
