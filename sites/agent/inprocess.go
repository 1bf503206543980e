package agent

import (
	"net/http"
	"net/http/httptest"
	"net/url"
)

// InProcess is an http.RoundTripper that answers the tools' API requests
// with the server's own handler in this process: no socket, no TLS. Each
// request arrives from RemoteAddr (the MCP caller's address, so per-IP
// limits count the caller) at Host (the web host the MCP request came
// to), with the MCP request's Authorization header as it was sent, so the
// tools meet the API's own limits and errors.
type InProcess struct {
	// Handler returns the server's HTTP handler.
	Handler       func() (http.Handler, error)
	Host          string
	RemoteAddr    string
	Authorization string
	// Count, when non-nil, is told the memory each recorded answer holds
	// (the recording and the copy the client reads it into).
	Count func(n int64)
}

// RoundTrip serves req and returns the recorded answer. The answer is
// the API's whatever Count does: the API refuses before it acts, and an
// answer it made after acting is counted, never refused.
func (t *InProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	h, err := t.Handler()
	if err != nil {
		return nil, err
	}
	in := req.Clone(req.Context())
	in.URL = &url.URL{Path: req.URL.Path, RawPath: req.URL.RawPath, RawQuery: req.URL.RawQuery}
	in.RequestURI = in.URL.RequestURI()
	in.Host = t.Host
	in.RemoteAddr = t.RemoteAddr
	if t.Authorization != "" {
		in.Header.Set("Authorization", t.Authorization)
	}
	if in.Body == nil {
		in.Body = http.NoBody
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, in)
	if t.Count != nil {
		t.Count(int64(rec.Body.Cap() + rec.Body.Len()))
	}
	res := rec.Result()
	res.Request = req
	return res, nil
}
