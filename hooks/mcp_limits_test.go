package hooks

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"sitedrop/sites/intake"
)

// The tools meet the API's limits: anonymous deploys count against the
// MCP caller's IP, as POST /deploy counts them.
func TestMCPAnonymousLimit(t *testing.T) {
	t.Parallel()
	env := newMCPEnv(t)
	cs := env.connect(t, "", "")
	for i := range env.sd.cfg.AnonDeploysPerHour {
		if _, dep := mustTool(t, cs, "deploy", map[string]any{"html": "<p>x</p>"}); dep["claim_url"] == nil {
			t.Fatalf("deploy %d: %v", i, dep)
		}
	}
	mustToolError(t, cs, "deploy", map[string]any{"html": "<p>x</p>"}, "HTTP 429")
	// the same IP, straight to the API: the same budget
	res, err := http.Post(env.srv.URL+"/deploy", "application/json", strings.NewReader(`{"html":"<p>x</p>"}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("POST /deploy after the MCP deploys: %d", res.StatusCode)
	}
}

// A page of another origin cannot deploy anonymously through /mcp, as it
// cannot through POST /deploy.
func TestMCPAnonymousCrossOrigin(t *testing.T) {
	t.Parallel()
	env := newMCPEnv(t)
	req, _ := http.NewRequest(http.MethodPost, env.srv.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 403 || !strings.Contains(string(b), "Anonymous deploys are refused") {
		t.Fatalf("cross-origin anonymous /mcp: %d %s", res.StatusCode, b)
	}
}

// An MCP request holds its body (mcpMemoryFactor times, once it has come)
// and an allowance for its answers (mcpAnswerAllowance) against the deploy
// memory budget: with less than that left it is answered 503 before the
// tool runs, and the budget is given back after each request. The budget
// is sized from those reservations: with room for them and for the deploy
// the tool makes, an MCP deploy goes through.
func TestMCPMemoryBudget(t *testing.T) {
	env := newMCPEnv(t)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"deploy","arguments":{"slug":"busy","html":"` + strings.Repeat("b", 10<<10) + `"}}}`
	need := mcpMemoryFactor*int64(len(body)) + mcpAnswerAllowance
	env.sd.Memory = intake.NewBudget(need + 64<<10) // 64 KiB for the deploy of 10 KiB
	env.sd.MemoryWait = 0
	cs := env.connect(t, keyAlice, "")
	mustTool(t, cs, "deploy", map[string]any{"html": "<p>" + strings.Repeat("a", 10<<10) + "</p>"})
	if n := env.sd.Memory.InUse(); n != 0 {
		t.Fatalf("%d bytes still reserved after a deploy", n)
	}

	// one byte short of what the request reserves
	if !env.sd.Memory.Take(t.Context(), env.sd.Memory.Max()-(need-1), 0) {
		t.Fatal("could not fill the budget")
	}
	res, b := postMCPKey(t, env, body, "", keyAlice)
	if res.StatusCode != 503 || res.Header.Get("Retry-After") == "" || strings.TrimSpace(b) != errBody(msgServerBusy) {
		t.Fatalf("past the budget: %d %s", res.StatusCode, b)
	}
	if _, err := env.app.FindFirstRecordByData("deployments", "slug", "busy"); err == nil {
		t.Fatal("the refused deploy was made")
	}
}

// An MCP body is bounded by --max-body, as a JSON deploy is.
func TestMCPBodyLimit(t *testing.T) {
	t.Parallel()
	env := newMCPEnv(t)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"deploy","arguments":{"html":"` + strings.Repeat("b", int(env.sd.cfg.MaxBody)) + `"}}}`
	req, _ := http.NewRequest(http.MethodPost, env.srv.URL+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("a body over --max-body: %d", res.StatusCode)
	}
}

// The SDK's own refusals (before any tool runs) answer the API's
// {"error"} shape, as every error a client can cause does.
func TestMCPTransportErrorsAreJSON(t *testing.T) {
	t.Parallel()
	env := newMCPEnv(t)
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"deploy","arguments":{"html":"` + strings.Repeat("b", int(env.sd.cfg.MaxBody)) + `"}}}`
	for _, tc := range []struct {
		name, method, body, accept string
		status                     int
	}{
		{"GET", http.MethodGet, "", "application/json, text/event-stream", http.StatusMethodNotAllowed},
		{"DELETE", http.MethodDelete, "", "application/json, text/event-stream", http.StatusMethodNotAllowed},
		{"malformed JSON", http.MethodPost, "{not json", "application/json, text/event-stream", http.StatusBadRequest},
		{"a body over --max-body", http.MethodPost, big, "application/json, text/event-stream", http.StatusRequestEntityTooLarge},
	} {
		req, _ := http.NewRequest(tc.method, env.srv.URL+"/mcp", strings.NewReader(tc.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", tc.accept)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var out map[string]string
		err = json.NewDecoder(res.Body).Decode(&out)
		res.Body.Close()
		if res.StatusCode != tc.status || err != nil || out["error"] == "" || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
			t.Errorf("%s: %d %q %v %v, want %d with {\"error\"}", tc.name, res.StatusCode, res.Header.Get("Content-Type"), out, err, tc.status)
		}
	}
}
