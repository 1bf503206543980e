package agent

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestCheckMessage: one JSON object passes; a batch and anything else
// are refused, each with its own error.
func TestCheckMessage(t *testing.T) {
	for body, want := range map[string]error{
		`{"jsonrpc":"2.0"}`: nil, " \r\n\t{}": nil,
		`[{}]`: ErrBatch, "\n[": ErrBatch,
		``: ErrNotObject, `null`: ErrNotObject, "\ufeff{}": ErrNotObject,
	} {
		if err := CheckMessage([]byte(body)); !errors.Is(err, want) {
			t.Errorf("CheckMessage(%q) = %v, want %v", body, err, want)
		}
	}
}

// TestAnswerWriter: the SDK's plain-text error becomes {"error": ...}
// with the same status; a JSON answer passes untouched, every byte
// counted.
func TestAnswerWriter(t *testing.T) {
	rec := httptest.NewRecorder()
	w := NewAnswerWriter(rec, nil)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusMethodNotAllowed)
	io.WriteString(w, "method not allowed\n")
	w.Finish()
	if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Content-Type") != "application/json" ||
		rec.Body.String() != `{"error":"method not allowed"}`+"\n" {
		t.Errorf("rewritten error: %d %q %q", rec.Code, rec.Header().Get("Content-Type"), rec.Body.String())
	}

	rec = httptest.NewRecorder()
	var counted int64
	w = NewAnswerWriter(rec, func(n int64) { counted += n })
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	io.WriteString(w, `{"result":{}}`)
	w.Finish()
	if rec.Code != http.StatusOK || rec.Body.String() != `{"result":{}}` || counted != int64(len(`{"result":{}}`)) {
		t.Errorf("JSON answer: %d %q, %d bytes counted", rec.Code, rec.Body.String(), counted)
	}
}

// TestInProcessClient: the tools' requests reach the handler from the
// caller's address, at its host, with its Authorization header; an
// Authorization header without a bearer key is sent as a key no account
// has, never as an anonymous request.
func TestInProcessClient(t *testing.T) {
	var got *http.Request
	h := &LazyHandler{Build: func() (http.Handler, error) {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got = r
			io.WriteString(w, `{}`)
		}), nil
	}}
	var counted int64
	tr := &InProcess{Handler: h.Handler, Host: "web.test", RemoteAddr: "192.0.2.1:0", Authorization: "Bearer sd_k", Count: func(n int64) { counted += n }}
	res, err := tr.RoundTrip(httptest.NewRequest(http.MethodGet, "http://elsewhere/deploys?x=1", nil))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if got.Host != "web.test" || got.RemoteAddr != "192.0.2.1:0" || got.Header.Get("Authorization") != "Bearer sd_k" ||
		got.URL.RequestURI() != "/deploys?x=1" || counted == 0 {
		t.Errorf("request %s %s from %s, auth %q; %d bytes counted", got.Host, got.URL, got.RemoteAddr, got.Header.Get("Authorization"), counted)
	}
	if c := tr.Client("", true); c.Key != "-" || !strings.HasSuffix(c.Server, "//web.test") {
		t.Errorf("a non-bearer Authorization: key %q at %q", c.Key, c.Server)
	}
	if c := tr.Client("", false); c.Key != "" {
		t.Errorf("no Authorization: key %q", c.Key)
	}
}
