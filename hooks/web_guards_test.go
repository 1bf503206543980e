package hooks

import (
	"net/http"
	"strings"
	"testing"

	"github.com/pocketbase/pocketbase/apis"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tests"
)

// newServedMux is newMux with the global CORS middleware that apis.Serve
// binds before OnServe (PocketBase's default, "*"), as in production.
func newServedMux(t testing.TB, app *tests.TestApp) http.Handler {
	t.Helper()
	r, err := apis.NewRouter(app)
	if err != nil {
		t.Fatal(err)
	}
	r.Bind(apis.CORS(apis.CORSConfig{AllowOrigins: []string{"*"}}))
	se := new(core.ServeEvent)
	se.App, se.Router = app, r
	var mux http.Handler
	err = app.OnServe().Trigger(se, func(e *core.ServeEvent) (err error) {
		mux, err = e.Router.BuildMux()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return mux
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
