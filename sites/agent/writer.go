package agent

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
)

// AnswerWriter is the response writer the MCP SDK's HTTP handler answers
// a request with (see NewAnswerWriter). Two jobs:
//
//   - The SDK's own error answers (a refused method, a malformed body, a
//     bad Accept or protocol header: plain text before any tool runs)
//     become sitedrop's API shape, {"error": "..."}, so that every error
//     a client can cause reads the same. Answers that are already JSON
//     (JSON-RPC results and errors) pass through untouched.
//   - Every byte of an answer is counted (the SDK builds a JSON answer
//     whole, so its size is memory the request holds) as it is written,
//     never refused: a tool may have acted already.
//
// The head waits for the first bytes (or Finish), so that an error answer
// can still be rewritten. Call Finish once the handler has returned.
type AnswerWriter struct {
	http.ResponseWriter
	count   func(n int64) // nil: nothing counted
	status  int           // the status set, sent with the first bytes
	sent    bool          // the head has been sent
	errText *bytes.Buffer // an error answer held to be rewritten, when non-nil
}

// NewAnswerWriter is an AnswerWriter over w that calls count (when
// non-nil) with the size of each piece of an answer it writes.
func NewAnswerWriter(w http.ResponseWriter, count func(n int64)) *AnswerWriter {
	return &AnswerWriter{ResponseWriter: w, count: count}
}

// WriteHeader sets the status to send with the first bytes, and starts
// holding an error answer that is not JSON.
func (w *AnswerWriter) WriteHeader(status int) {
	if w.sent || w.status != 0 {
		return
	}
	w.status = status
	if status >= 400 && !strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") {
		w.errText = new(bytes.Buffer)
	}
}

// Write holds the text of a rewritten answer, and writes the rest,
// counting its bytes.
func (w *AnswerWriter) Write(p []byte) (int, error) {
	if w.errText != nil {
		return w.errText.Write(p)
	}
	if w.count != nil {
		w.count(int64(len(p)))
	}
	w.sendHead()
	return w.ResponseWriter.Write(p)
}

// sendHead sends the status set (200 when none was).
func (w *AnswerWriter) sendHead() {
	if w.sent {
		return
	}
	w.sent = true
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.ResponseWriter.WriteHeader(w.status)
}

// Flush sends the head and passes a flush on, except while an error
// answer is held.
func (w *AnswerWriter) Flush() {
	if w.errText != nil {
		return
	}
	w.sendHead()
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the underlying writer.
func (w *AnswerWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Finish writes a held error answer as {"error": "<its text>"}, or the
// head of an answer without a body (202).
func (w *AnswerWriter) Finish() {
	switch {
	case w.errText != nil:
		msg := strings.TrimSpace(w.errText.String())
		if msg == "" {
			msg = http.StatusText(w.status)
		}
		w.writeError(w.status, msg)
	case w.status != 0:
		w.sendHead()
	}
}

// writeError answers status with {"error": msg}, in place of what the SDK
// meant to send.
func (w *AnswerWriter) writeError(status int, msg string) {
	b, _ := json.Marshal(map[string]string{"error": msg})
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Del("Content-Length")
	h.Del("X-Content-Type-Options") // set again below: one value
	h.Set("X-Content-Type-Options", "nosniff")
	w.sent = true
	w.ResponseWriter.WriteHeader(status)
	_, _ = w.ResponseWriter.Write(append(b, '\n'))
}
