package agent

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"

	"sitedrop/sites/client"
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

// Client is an API client for the tools of one MCP request, whose
// requests t serves. key is the request's bearer key, sent whether it
// sent an Authorization header: one that holds no bearer key gets the
// API's 401, never an anonymous deploy.
func (t *InProcess) Client(key string, sent bool) *client.Client {
	if sent && key == "" {
		key = "-" // a key no account has
	}
	return &client.Client{Server: "http://" + t.Host, Key: key, HTTP: &http.Client{Transport: t}}
}

// LazyHandler is a server's HTTP handler for InProcess: the one the
// server serves with (Use), or, where no server was started (a test
// harness), the one Build makes at first use.
type LazyHandler struct {
	Build func() (http.Handler, error)
	once  sync.Once
	h     http.Handler
	err   error
}

// Use sets the handler the server serves with, when there is one.
func (l *LazyHandler) Use(h http.Handler) {
	if h != nil {
		l.once.Do(func() { l.h = h })
	}
}

// Handler returns the server's handler.
func (l *LazyHandler) Handler() (http.Handler, error) {
	l.once.Do(func() { l.h, l.err = l.Build() })
	return l.h, l.err
}
