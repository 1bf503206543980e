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
)

// postMCP posts body to /mcp with the headers an MCP client sends (and
// Mcp-Protocol-Version: version unless it is "").
func postMCP(t *testing.T, env *mcpEnv, body, version string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, env.srv.URL+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if version != "" {
		req.Header.Set("Mcp-Protocol-Version", version)
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
	if n := env.sd.memory.inUse(); n != 0 {
		t.Errorf("%d bytes of the memory budget still held", n)
	}
	// one message still gets its answer
	res, body := postMCP(t, env, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "2025-03-26")
	if res.StatusCode != 200 || !strings.Contains(body, `"name":"deploy"`) {
		t.Fatalf("tools/list: %d %.300s", res.StatusCode, body)
	}
}

// An MCP answer's bytes count against the deploy memory budget: with too
// little left for the answer, the request is refused 503 (Retry-After)
// rather than answered past the budget; with enough, it is answered, and
// the budget is given back after.
func TestMCPAnswerMemory(t *testing.T) {
	env := newMCPEnv(t)
	const body = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	res, answer := postMCP(t, env, body, "2025-03-26")
	if res.StatusCode != 200 {
		t.Fatalf("tools/list: %d %s", res.StatusCode, answer)
	}
	if len(answer) < 4*len(body) {
		t.Fatalf("the answer (%d bytes) is too short to tell from the body (%d)", len(answer), len(body))
	}
	// room for the body as it is read and decoded, not for the answer
	room := int64(mcpMemoryFactor*len(body) + len(answer)/2)
	env.sd.memory = newMemBudget(room)
	env.sd.memoryWait = 0
	res, refused := postMCP(t, env, body, "2025-03-26")
	if res.StatusCode != 503 || res.Header.Get("Retry-After") == "" || strings.TrimSpace(refused) != errBody(msgServerBusy) {
		t.Fatalf("an answer past the budget: %d %.300q Retry-After %q", res.StatusCode, refused, res.Header.Get("Retry-After"))
	}
	if n := env.sd.memory.inUse(); n != 0 {
		t.Fatalf("%d bytes still reserved after a refusal", n)
	}
	env.sd.memory = newMemBudget(room + int64(len(answer)))
	if res, got := postMCP(t, env, body, "2025-03-26"); res.StatusCode != 200 || got != answer {
		t.Fatalf("an answer within the budget: %d %.300s", res.StatusCode, got)
	}
	if n := env.sd.memory.inUse(); n != 0 {
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
	sd.memory = newMemBudget(10 * sd.cfg.MaxBody)
	sd.memoryWait = 200 * time.Millisecond
	sd.bodyGrace, sd.bodyMinRate = 2*time.Second, 1024
	srv := httptest.NewServer(newMux(t, app))
	t.Cleanup(srv.Close) // after the connections' own cleanups

	var slow []net.Conn
	for range 6 {
		slow = append(slow, rawMCPRequest(t, srv, int(sd.cfg.MaxBody), "{"))
	}
	waitFor(t, "the slow bodies to be read", func() bool { return sd.memory.inUse() >= 6 })
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
	waitFor(t, "the budget back", func() bool { return sd.memory.inUse() == 0 })
}
