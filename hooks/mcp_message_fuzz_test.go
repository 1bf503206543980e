package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"sitedrop/sites/agent"
	"sitedrop/sites/client"
)

// noAPI is an API transport that fails every request: the fuzzed tools
// reach no server.
type noAPI struct{}

func (noAPI) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("no API in the fuzz test")
}

// FuzzMCPRequest feeds raw bodies to the MCP request decoding, as mcpServe
// does: agent.CheckMessage, then, for a body it lets through, the SDK's
// stateless handler (the real agent tools, whose API calls fail) behind
// agent.AnswerWriter, at the oldest revision the SDK serves (the one whose batches
// it answers). It never panics; a refusal is a 400; a body that decodes
// as a JSON array (a batch, even with data after it, as the SDK reads it)
// or starts as one never reaches the SDK; an answer is never a JSON array
// (a batch's answer) nor a server error, and an error answer is JSON.
func FuzzMCPRequest(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"whoami","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"deploy","arguments":{"html":"<p>x</p>"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"no/such"}`, `{"jsonrpc":"2.0","id":4,"result":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"} [{"jsonrpc":"2.0","id":2,"method":"tools/list"}]`,
		// the review's finding: a batch of tools/list (20,000 of them
		// cost 21-28 s of CPU and 1.2 GiB)
		`[` + strings.TrimSuffix(strings.Repeat(`{"jsonrpc":"2.0","id":1,"method":"tools/list"},`, 64), ",") + `]`,
		`[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`, " \r\n\t[{}]", `[]`, `[{}] trailing`,
		"\ufeff[{}]", "\u00a0[{}]", `{`, `{}`, ``, ` `, `null`, `"x"`, `1`, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}}`,
	} {
		f.Add([]byte(s))
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
		return agent.NewServer(&client.Client{Server: "http://web.test", HTTP: &http.Client{Transport: noAPI{}}}, nil)
	}, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, MaxRequestBodyBytes: 1 << 20, DisableLocalhostProtection: true})
	f.Fuzz(func(t *testing.T, body []byte) {
		err := agent.CheckMessage(body)
		var batch []json.RawMessage
		decodesAsBatch := json.NewDecoder(bytes.NewReader(body)).Decode(&batch) == nil && batch != nil
		startsAsBatch := bytes.HasPrefix(bytes.TrimLeft(body, " \t\r\n"), []byte("["))
		if err != nil {
			ae, ok := toAPIError(err)
			if !ok || ae.Status != http.StatusBadRequest {
				t.Fatalf("refusal %v, want a 400", err)
			}
			if startsAsBatch && ae.Message != msgMCPBatch {
				t.Fatalf("a batch refused as %q", ae.Message)
			}
			return
		}
		if decodesAsBatch || startsAsBatch {
			t.Fatalf("a batch let through: %q", body)
		}
		req := httptest.NewRequest(http.MethodPost, "http://web.test/mcp", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-03-26")
		rec := httptest.NewRecorder()
		w := agent.NewAnswerWriter(rec, nil)
		done := make(chan struct{})
		go func() {
			defer close(done)
			h.ServeHTTP(w, req)
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("no answer to %q within 5 s", body)
		}
		w.Finish()
		answer := bytes.TrimLeft(rec.Body.Bytes(), " \t\r\n")
		if bytes.HasPrefix(answer, []byte("[")) {
			t.Fatalf("a batch answer to %q: %.200s", body, answer)
		}
		if rec.Code >= 500 {
			t.Fatalf("%q: %d %.200s", body, rec.Code, answer)
		}
		if rec.Code >= 400 && (!strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") || !json.Valid(answer)) {
			t.Fatalf("%q: an error answer that is not JSON: %d %q %.200s", body, rec.Code, rec.Header().Get("Content-Type"), answer)
		}
	})
}
