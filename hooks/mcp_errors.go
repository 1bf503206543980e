package hooks

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
)

// mcpErrorWriter turns the MCP SDK's own error answers (a refused method,
// a malformed or oversized body, a bad Accept or protocol header: plain
// text before any tool runs) into the API's {"error": "..."} shape, so
// that every error a client can cause reads the same. Answers that are
// already JSON (JSON-RPC results and errors) pass through untouched.
type mcpErrorWriter struct {
	http.ResponseWriter
	status int          // set when an error answer is being rewritten
	body   bytes.Buffer // its text
}

// WriteHeader starts rewriting an error answer that is not JSON.
func (w *mcpErrorWriter) WriteHeader(status int) {
	if status >= 400 && !strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") {
		w.status = status
		return
	}
	w.ResponseWriter.WriteHeader(status)
}

// Write holds the text of a rewritten answer, and passes the rest on.
func (w *mcpErrorWriter) Write(p []byte) (int, error) {
	if w.status != 0 {
		return w.body.Write(p)
	}
	return w.ResponseWriter.Write(p)
}

// Flush passes a flush on, except while an error answer is held.
func (w *mcpErrorWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok && w.status == 0 {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the underlying writer.
func (w *mcpErrorWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finish writes a held error answer as {"error": "<its text>"}.
func (w *mcpErrorWriter) finish() {
	if w.status == 0 {
		return
	}
	msg := strings.TrimSpace(w.body.String())
	if msg == "" {
		msg = http.StatusText(w.status)
	}
	b, _ := json.Marshal(map[string]string{"error": msg})
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Del("Content-Length")
	h.Del("X-Content-Type-Options") // set again below: one value
	h.Set("X-Content-Type-Options", "nosniff")
	w.ResponseWriter.WriteHeader(w.status)
	_, _ = w.ResponseWriter.Write(b)
}
