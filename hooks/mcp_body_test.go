package hooks

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"sitedrop/sites/intake"
)

// postMCP posts body to /mcp with the headers an MCP client sends (and
// Mcp-Protocol-Version: version unless it is "").
func postMCP(t *testing.T, env *mcpEnv, body, version string) (*http.Response, string) {
	t.Helper()
	return postMCPKey(t, env, body, version, "")
}

// postMCPKey is postMCP with the API key key ("" for none).
func postMCPKey(t *testing.T, env *mcpEnv, body, version, key string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, env.srv.URL+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if version != "" {
		req.Header.Set("Mcp-Protocol-Version", version)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	return res, string(b)
}

// mcpBatch is a JSON-RPC batch of n tools/list requests, the review's
// finding (20,000 of them cost 21-28 s of CPU and 1.2 GiB).
func mcpBatch(n int) string {
	msgs := make([]string, n)
	for i := range msgs {
		msgs[i] = `{"jsonrpc":"2.0","id":` + strconv.Itoa(i+1) + `,"method":"tools/list"}`
	}
	return "[" + strings.Join(msgs, ",") + "]"
}

// A JSON-RPC batch is refused (400, {"error"}) before the SDK reads it,
// whatever protocol revision the client claims (the SDK itself answers
// batches of the revisions before 2025-06-18, each message in full): the
// work is the body's read, whatever the batch's length, and no memory is
// left held.
func TestMCPBatchRefused(t *testing.T) {
	t.Parallel()
	env := newMCPEnv(t)
	long := mcpBatch(int(env.sd.cfg.MaxBody) / 50) // as many as fit in --max-body
	if int64(len(long)) > env.sd.cfg.MaxBody {
		t.Fatalf("the batch is %d bytes, over --max-body", len(long))
	}
	for _, tc := range []struct{ name, body, version string }{
		{"a long batch, no version", long, ""},
		{"a long batch, claiming 2025-03-26", long, "2025-03-26"},
		{"a long batch, claiming 2024-11-05", long, "2024-11-05"},
		{"one message in a batch", mcpBatch(1), "2025-03-26"},
		{"a batch after white space", " \r\n\t" + mcpBatch(2), "2025-03-26"},
		{"a batch claiming the latest revision", mcpBatch(2), "2025-11-25"},
	} {
		res, body := postMCP(t, env, tc.body, tc.version)
		var out map[string]string
		if err := json.Unmarshal([]byte(body), &out); res.StatusCode != 400 || err != nil || out["error"] != msgMCPBatch {
			t.Errorf("%s: %d %.300s", tc.name, res.StatusCode, body)
		}
	}
	if n := env.sd.Memory.InUse(); n != 0 {
		t.Errorf("%d bytes of the memory budget still held", n)
	}
	// one message still gets its answer
	res, body := postMCP(t, env, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "2025-03-26")
	if res.StatusCode != 200 || !strings.Contains(body, `"name":"deploy"`) {
		t.Fatalf("tools/list: %d %.300s", res.StatusCode, body)
	}
}

// mcpDeployCall is a tools/call of deploy, as one JSON-RPC message, of a
// site at slug whose one page, deep in long directories, links to 100
// missing pages: the deploy's report lists each (page and target, about
// 1.6 KiB), so the answer is far longer than the body.
func mcpDeployCall(t *testing.T, slug string) string {
	t.Helper()
	dir := strings.Repeat(strings.Repeat("d", 200)+"/", 4)
	var links strings.Builder
	links.WriteString("<title>deep</title>")
	for i := range 100 {
		fmt.Fprintf(&links, `<a href="x%d">%d</a>`, i, i)
	}
	msg, err := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": "deploy", "arguments": map[string]any{
			"slug":  slug,
			"files": []map[string]string{{"path": dir + "p.html", "content": links.String()}},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(msg)
}

// An MCP request is refused for memory only before anything is
// dispatched: its body's memory and an allowance for its answer
// (mcpAnswerAllowance) are reserved once the body has come, and with less
// left the answer is 503 (Retry-After) and no tool runs. Once a tool has
// run, its answer (the API's and the MCP answer, past the allowance) is
// counted without a refusal: an agent told "busy" after its deploy was
// made would deploy again. The budget is given back after either.
func TestMCPAnswerMemory(t *testing.T) {
	env := newMCPEnv(t)
	env.sd.MemoryWait = 0
	refused, made := mcpDeployCall(t, "refused"), mcpDeployCall(t, "answered")
	need := func(body string) int64 { return mcpMemoryFactor*int64(len(body)) + mcpAnswerAllowance }
	// room for what is reserved before the tool runs, and for the deploy
	// it makes, but far from its answer
	const deployRoom = 64 << 10

	// one byte short of the reservation: refused before the tool runs
	env.sd.Memory = intake.NewBudget(need(refused) - 1)
	res, body := postMCPKey(t, env, refused, "2025-03-26", keyAlice)
	if res.StatusCode != 503 || res.Header.Get("Retry-After") == "" || strings.TrimSpace(body) != errBody(msgServerBusy) {
		t.Fatalf("an MCP deploy short of its reservation: %d %.300s Retry-After %q", res.StatusCode, body, res.Header.Get("Retry-After"))
	}
	if _, err := env.app.FindFirstRecordByData("deployments", "slug", "refused"); err == nil {
		t.Fatal("the refused deploy was made")
	}
	if n := env.sd.Memory.InUse(); n != 0 {
		t.Fatalf("%d bytes still reserved after a refusal", n)
	}

	// the reservation fits, the answer does not: the deploy is made and
	// its answer delivered, counted past the budget while it is held
	env.sd.Memory = intake.NewBudget(need(made) + deployRoom)
	res, body = postMCPKey(t, env, made, "2025-03-26", keyAlice)
	var out struct {
		Result struct {
			IsError           bool                    `json:"isError"`
			Content           []struct{ Text string } `json:"content"`
			StructuredContent map[string]any          `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(body), &out); res.StatusCode != 200 || err != nil || out.Result.IsError || out.Result.StructuredContent["slug"] != "answered" ||
		len(out.Result.Content) == 0 || !strings.HasPrefix(out.Result.Content[0].Text, "Published ") {
		t.Fatalf("an MCP deploy whose answer is past the budget: %d %v %.500s", res.StatusCode, err, body)
	}
	if int64(len(body)) <= deployRoom+mcpAnswerAllowance {
		t.Fatalf("the answer (%d bytes) fits the budget: nothing tested", len(body))
	}
	if _, err := env.app.FindFirstRecordByData("deployments", "slug", "answered"); err != nil {
		t.Fatalf("the answered deploy: %v", err)
	}
	if n := env.sd.Memory.InUse(); n != 0 {
		t.Fatalf("%d bytes still reserved after an answer", n)
	}
}

// rawMCPRequest opens a connection to srv and sends the head of an MCP
// request (an anonymous one, with the headers the SDK asks for) whose body
// is contentLength long, and the body's first bytes.
func rawMCPRequest(t *testing.T, srv *httptest.Server, contentLength int, first string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	head := fmt.Sprintf("POST /mcp HTTP/1.1\r\nHost: web.test\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n", contentLength)
	if _, err := io.WriteString(c, head+first); err != nil {
		t.Fatal(err)
	}
	return c
}

// Slow /mcp bodies hold no more of the deploy memory budget than the bytes
// that came (not their Content-Length up front), so that six connections
// trickling a byte leave a keyed deploy its memory; and they are cut off
// with 408 after the grace, as deploy bodies are.
func TestMCPSlowBodies(t *testing.T) {
	app, sd := newFixtureApp(t)
	// the default ratio: 512 MiB of budget for 50 MiB bodies
	sd.Memory = intake.NewBudget(10 * sd.cfg.MaxBody)
	sd.MemoryWait = 200 * time.Millisecond
	sd.BodyGrace, sd.BodyMinRate = 2*time.Second, 1024
	srv := httptest.NewServer(newMux(t, app))
	t.Cleanup(srv.Close) // after the connections' own cleanups

	var slow []net.Conn
	for range 6 {
		slow = append(slow, rawMCPRequest(t, srv, int(sd.cfg.MaxBody), "{"))
	}
	waitFor(t, "the slow bodies to be read", func() bool { return sd.Memory.InUse() >= 6 })
	res, body := deployLive(t, srv, keyAlice, `{"html":"<p>`+strings.Repeat("a", 30<<10)+`</p>","slug":"beside-mcp"}`)
	if res.StatusCode != 200 {
		t.Fatalf("a keyed deploy beside slow /mcp bodies: %d %s", res.StatusCode, body)
	}
	for i, c := range slow {
		res, body := readRaw(t, c)
		if res.StatusCode != http.StatusRequestTimeout || strings.TrimSpace(body) != errBody("Request body too slow: after 2s it must arrive at 1 KiB a second or more") {
			t.Errorf("slow /mcp body %d: %d %s", i, res.StatusCode, body)
		}
	}
	waitFor(t, "the budget back", func() bool { return sd.Memory.InUse() == 0 })
}
