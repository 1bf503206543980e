package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pocketbase/pocketbase/tests"
)

// mcpEnv is a fixture app served over real HTTP, for the SDK's client.
type mcpEnv struct {
	app *tests.TestApp
	sd  *built
	srv *httptest.Server
}

func newMCPEnv(t *testing.T) *mcpEnv {
	t.Helper()
	app, sd := newFixtureApp(t)
	srv := httptest.NewServer(newMux(t, app))
	t.Cleanup(srv.Close)
	return &mcpEnv{app: app, sd: sd, srv: srv}
}

// withKey adds an Authorization header to each request: Bearer key, or
// key itself when it names another scheme ("Basic ...").
type withKey struct{ key string }

func (k withKey) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	switch {
	case strings.HasPrefix(k.key, "Basic "):
		r.Header.Set("Authorization", k.key)
	case k.key != "":
		r.Header.Set("Authorization", "Bearer "+k.key)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// connect opens an MCP session to /mcp with key ("" for none), at the
// protocol revision version ("" for the SDK's latest).
func (env *mcpEnv) connect(t *testing.T, key, version string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "sitedrop-test", Version: "1"}, nil)
	tr := &mcp.StreamableClientTransport{
		Endpoint:             env.srv.URL + "/mcp",
		HTTPClient:           &http.Client{Transport: withKey{key}},
		DisableStandaloneSSE: true,
		MaxRetries:           -1,
	}
	cs, err := c.Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect (protocol %q): %v", version, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// callTool calls a tool and returns its result, its text and its
// structured content; a protocol error fails the test.
func callTool(t *testing.T, cs *mcp.ClientSession, name string, args any) (*mcp.CallToolResult, string, map[string]any) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var text []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text = append(text, tc.Text)
		}
	}
	sc, _ := res.StructuredContent.(map[string]any)
	return res, strings.Join(text, "\n"), sc
}

// mustTool is callTool that fails the test on an error result.
func mustTool(t *testing.T, cs *mcp.ClientSession, name string, args any) (string, map[string]any) {
	t.Helper()
	res, text, sc := callTool(t, cs, name, args)
	if res.IsError {
		t.Fatalf("%s: error result %q", name, text)
	}
	if sc == nil {
		t.Fatalf("%s: no structured content (text %q)", name, text)
	}
	return text, sc
}

// mustToolError is callTool that wants an error result containing want.
func mustToolError(t *testing.T, cs *mcp.ClientSession, name string, args any, want string) {
	t.Helper()
	res, text, _ := callTool(t, cs, name, args)
	if !res.IsError || !strings.Contains(text, want) {
		t.Fatalf("%s: isError %v, text %q; want an error result with %q", name, res.IsError, text, want)
	}
}

// fetch gets a site URL through the test server (the site host split).
func (env *mcpEnv) fetch(t *testing.T, siteURL string) (int, string) {
	t.Helper()
	u, err := url.Parse(siteURL)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, env.srv.URL+u.Path, nil)
	req.Host = u.Host
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func TestMCPKeyedLifecycle(t *testing.T) {
	t.Parallel()
	env := newMCPEnv(t)
	cs := env.connect(t, keyAlice, "")

	text, dep := mustTool(t, cs, "deploy", map[string]any{
		"files": []map[string]any{
			{"path": "index.html", "content": "<!doctype html><h1>From an agent</h1>"},
			{"path": "a.txt", "content": "aGVsbG8=", "encoding": "base64"},
		},
		"slug": "agent-site", "title": "Agent",
	})
	id, siteURL := dep["id"].(string), dep["url"].(string)
	if id == "" || !strings.Contains(siteURL, "agent-site.") || !strings.Contains(text, siteURL) || dep["claim_url"] != nil {
		t.Fatalf("deploy: %q %v", text, dep)
	}
	if code, body := env.fetch(t, siteURL); code != 200 || !strings.Contains(body, "From an agent") || !strings.Contains(body, "<title>Agent</title>") {
		t.Fatalf("site: %d %q", code, body)
	}
	if code, body := env.fetch(t, siteURL+"a.txt"); code != 200 || body != "hello" {
		t.Fatalf("a.txt: %d %q", code, body)
	}

	// the API's errors are error results with its message
	mustToolError(t, cs, "deploy", map[string]any{"html": "<p>again</p>", "slug": "agent-site"}, "taken")

	text, up := mustTool(t, cs, "update", map[string]any{"id": id, "html": "<!doctype html><h1>Second</h1>"})
	if up["id"] != id || !strings.Contains(text, "Updated") {
		t.Fatalf("update: %q %v", text, up)
	}
	if _, body := env.fetch(t, siteURL); !strings.Contains(body, "Second") {
		t.Fatalf("after update: %q", body)
	}

	text, list := mustTool(t, cs, "list_deploys", map[string]any{})
	if ds, _ := list["deployments"].([]any); len(ds) != 2 || !strings.Contains(text, "agent-site") {
		t.Fatalf("list: %q %v", text, list)
	}
	text, st := mustTool(t, cs, "get_status", map[string]any{"id": id})
	if st["status"] != "active" || st["title"] != "Agent" || !strings.Contains(text, "agent-site") {
		t.Fatalf("status: %q %v", text, st)
	}
	_, who := mustTool(t, cs, "whoami", map[string]any{})
	if u, _ := who["user"].(map[string]any); u["email"] != "alice@example.com" {
		t.Fatalf("whoami: %v", who)
	}

	// another user's site: the API's 404
	mustToolError(t, cs, "get_status", map[string]any{"id": idBobSite}, "HTTP 404")

	mustToolError(t, cs, "teardown", map[string]any{"id": id}, "confirm: true")
	if code, _ := env.fetch(t, siteURL); code != 200 {
		t.Fatalf("teardown without confirm deleted the site: %d", code)
	}
	text, del := mustTool(t, cs, "teardown", map[string]any{"id": id, "confirm": true})
	if del["id"] != id {
		t.Fatalf("teardown: %q %v", text, del)
	}
	if code, _ := env.fetch(t, siteURL); code != 404 {
		t.Fatalf("after teardown: %d", code)
	}
}

func TestMCPAnonymous(t *testing.T) {
	t.Parallel()
	env := newMCPEnv(t)
	cs := env.connect(t, "", "")

	text, dep := mustTool(t, cs, "deploy", map[string]any{"html": `<!doctype html><h1>Anon agent</h1><img src="/logo.png">`})
	claim, _ := dep["claim_url"].(string)
	if claim == "" || dep["claim_token"] == "" || !strings.Contains(text, claim) {
		t.Fatalf("anonymous deploy: %q %v", text, dep)
	}
	// the result carries the report, and the text sums it up
	report, _ := dep["report"].(map[string]any)
	broken, _ := report["broken_links"].([]any)
	if len(broken) != 1 || fmt.Sprint(broken[0]) != "map[page:index.html target:/logo.png]" ||
		!strings.Contains(text, "Report: 1 broken internal link(s), 1 page(s) without a title: see report.") {
		t.Fatalf("anonymous deploy's report: %q %v", text, report)
	}
	if code, body := env.fetch(t, dep["url"].(string)); code != 200 || !strings.Contains(body, "Anon agent") {
		t.Fatalf("site: %d %q", code, body)
	}
	id := map[string]any{"id": idAliceSite}
	for tool, args := range map[string]map[string]any{
		"update": {"id": idAliceSite, "html": "<p>x</p>"}, "get_status": id, "list_deploys": {},
		"teardown": {"id": idAliceSite, "confirm": true}, "whoami": {},
		"claim":           {"slug": "anon-site", "claim_token": anonToken},
		"get_submissions": id, "delete_submission": {"id": idAliceSite, "submission_id": "x"},
		"list_versions": id, "rollback": {"id": idAliceSite, "version": 1},
		"promote":   {"id": idAliceSite, "version": 1},
		"analytics": id,
		"rename":    {"id": idAliceSite, "slug": "alice-new"}, "pause": id, "resume": id,
	} {
		mustToolError(t, cs, tool, args, "this tool needs an API key")
	}

	// a wrong key is the API's 401, not an anonymous deploy
	bad := env.connect(t, keyUnknown, "")
	mustToolError(t, bad, "deploy", map[string]any{"html": "<p>x</p>"}, "HTTP 401")
	// a header that is not a bearer key: the API's 401 too
	basic := env.connect(t, "Basic Zm9vOmJhcg==", "")
	mustToolError(t, basic, "deploy", map[string]any{"html": "<p>x</p>"}, "HTTP 401")

	// the tools and their annotations
	tools := map[string]*mcp.Tool{}
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		tools[tool.Name] = tool
	}
	if len(tools) != 16 {
		t.Fatalf("%d tools", len(tools))
	}
	if a := tools["teardown"].Annotations; a == nil || a.DestructiveHint == nil || !*a.DestructiveHint {
		t.Fatalf("teardown annotations: %+v", a)
	}
	if a := tools["list_deploys"].Annotations; a == nil || !a.ReadOnlyHint {
		t.Fatalf("list_deploys annotations: %+v", a)
	}
	schema, _ := json.Marshal(tools["deploy"].InputSchema)
	for _, want := range []string{`"html"`, `"files"`, `"is_spa"`, `"encoding"`, `"description":"`, `"draft"`, `"alias"`, `"message"`} {
		if !strings.Contains(string(schema), want) {
			t.Fatalf("deploy schema lacks %s: %s", want, schema)
		}
	}
}

// Clients of the previous protocol revisions connect and call tools.
func TestMCPProtocolRevisions(t *testing.T) {
	t.Parallel()
	env := newMCPEnv(t)
	for _, v := range []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"} {
		cs := env.connect(t, keyAlice, v)
		if got := cs.InitializeResult(); got != nil && got.ProtocolVersion != v {
			t.Fatalf("asked for %s, got %s", v, got.ProtocolVersion)
		}
		if text, _ := mustTool(t, cs, "whoami", map[string]any{}); !strings.Contains(text, "alice@example.com") {
			t.Fatalf("%s: whoami %q", v, text)
		}
	}
}

// /mcp belongs to the web host: a site host serves the site's own /mcp.
func TestMCPNotOnSiteHosts(t *testing.T) {
	t.Parallel()
	env := newMCPEnv(t)
	req, _ := http.NewRequest(http.MethodPost, env.srv.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Host = "alice-site.sites.test"
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if strings.Contains(string(b), "jsonrpc") {
		t.Fatalf("a site host answered MCP: %d %s", res.StatusCode, b)
	}
}

func TestMCPSiteTools(t *testing.T) {
	t.Parallel()
	env := newMCPEnv(t)
	cs := env.connect(t, keyAlice, "")

	// claim an anonymous site
	text, cl := mustTool(t, cs, "claim", map[string]any{"slug": "anon-site", "claim_token": anonToken})
	if cl["id"] != idAnonSite || !strings.Contains(text, "Claimed") {
		t.Fatalf("claim: %q %v", text, cl)
	}
	mustToolError(t, cs, "claim", map[string]any{"slug": "old-anon", "claim_token": "wrong"}, "HTTP 4")

	// versions and rollback
	mustTool(t, cs, "update", map[string]any{"id": idAliceSite, "html": "<!doctype html><h1>v2</h1>"})
	text, vs := mustTool(t, cs, "list_versions", map[string]any{"id": idAliceSite})
	versions, _ := vs["versions"].([]any)
	if len(versions) != 2 || !strings.Contains(text, "(live)") {
		t.Fatalf("versions: %q %v", text, vs)
	}
	oldest := versions[1].(map[string]any)["version"]
	text, rb := mustTool(t, cs, "rollback", map[string]any{"id": idAliceSite, "version": oldest})
	if rb["version"] != oldest || !strings.Contains(text, "live again") {
		t.Fatalf("rollback: %q %v", text, rb)
	}
	if _, body := env.fetch(t, "http://alice-site.sites.test/"); !strings.Contains(body, "alice") {
		t.Fatalf("after rollback: %q", body)
	}
	mustToolError(t, cs, "rollback", map[string]any{"id": idAliceSite, "version": 99}, "HTTP 404")

	// analytics: the API's days and lists, summed up in the text
	text, an := mustTool(t, cs, "analytics", map[string]any{"id": idAliceSite, "from": "2026-03-01", "to": "2026-03-03"})
	if days, _ := an["days"].([]any); len(days) != 3 || !strings.Contains(text, "2026-03-01 to 2026-03-03: 0 page view(s)") {
		t.Fatalf("analytics: %q %v", text, an)
	}
	mustToolError(t, cs, "analytics", map[string]any{"id": idAliceSite, "from": "March"}, "HTTP 400")

	// submissions
	for _, msg := range []string{"first", "second"} {
		res, err := http.Post(env.srv.URL+"/submit/"+idAliceSite, "application/json", strings.NewReader(`{"message":"`+msg+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("submit: %d", res.StatusCode)
		}
	}
	text, subs := mustTool(t, cs, "get_submissions", map[string]any{"id": idAliceSite, "limit": 1})
	page, _ := subs["submissions"].([]any)
	if len(page) != 1 || subs["total"] != float64(2) || !strings.Contains(text, "2 in all") {
		t.Fatalf("submissions: %q %v", text, subs)
	}
	subID, _ := page[0].(map[string]any)["id"].(string)
	text, del := mustTool(t, cs, "delete_submission", map[string]any{"id": idAliceSite, "submission_id": subID})
	if del["id"] != subID {
		t.Fatalf("delete_submission: %q %v", text, del)
	}
	if _, subs = mustTool(t, cs, "get_submissions", map[string]any{"id": idAliceSite}); subs["total"] != float64(1) {
		t.Fatalf("after delete: %v", subs)
	}
	mustToolError(t, cs, "delete_submission", map[string]any{"id": idAliceSite, "submission_id": subID}, "HTTP 404")
	mustToolError(t, cs, "get_submissions", map[string]any{"id": idBobSite}, "HTTP 404")
}
