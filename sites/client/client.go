// Package client is a Go client of sitedrop's HTTP API: deploys (JSON or
// an archive), the digest protocol's missing-content check and blob
// uploads, listing, deleting, versions, rollback, promote, aliases, a version's
// files, the diff of two versions and sign-in by e-mail
// code. The CLI uses it.
//
// It only speaks HTTP: reading files from disk, saved logins and how
// server text is shown to a user are its callers' concern. The texts of
// the server's answers and errors are returned as the server sent them,
// not escaped for a terminal.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Client calls a sitedrop server's API.
type Client struct {
	// Server is the base URL, without a trailing slash.
	Server string
	// Key is the API key sent as a bearer token; "" for anonymous calls.
	Key string
	// HTTP sends the requests. It follows redirects as net/http does; a
	// 3xx answer it does not follow is an *Error.
	HTTP *http.Client
}

// UserAgent is the User-Agent the client sends: a server names the
// sessions a sign-in from it starts "sitedrop CLI" (accounts.ParseUserAgent).
const UserAgent = "sitedrop-cli"

// maxIdlePerHost is how many idle connections to the server the client
// keeps: enough for concurrent uploads (net/http's default, 2, would
// close and reopen the others' connections after every request).
const maxIdlePerHost = 32

// New returns a client of the server at the base URL server (a trailing
// slash is dropped) that sends key, if not "". Its requests time out
// after 10 minutes; it keeps up to 32 idle connections for concurrent
// requests.
func New(server, key string) *Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = maxIdlePerHost
	tr.MaxIdleConns = max(tr.MaxIdleConns, maxIdlePerHost)
	return &Client{Server: strings.TrimSuffix(server, "/"), Key: key, HTTP: &http.Client{Timeout: 10 * time.Minute, Transport: tr}}
}

// Error is a 3xx, 4xx or 5xx answer: its status and the server's error
// text, as sent (not escaped for a terminal).
type Error struct {
	Status int
	Msg    string
}

// Error is the server's text and the status.
func (e *Error) Error() string {
	return fmt.Sprintf("%s (HTTP %d)", e.Msg, e.Status)
}

// Sized is a request body of Size bytes read from R from offset 0. It is
// sent with its Content-Length (net/http sends other readers chunked) and
// "Expect: 100-continue", so nothing is sent when the server refuses
// before reading (a taken slug, a full upload budget); and it can be sent
// again (a redirect, a retry on a closed connection) by reading R again.
// An empty one is sent as no body. R is never closed.
type Sized struct {
	R    io.ReaderAt
	Size int64
	// Header holds request headers sent with the body (an archive
	// deploy's password); nil for none.
	Header http.Header
}

// prepare makes req send b.
func (b Sized) prepare(req *http.Request) {
	for k, v := range b.Header {
		req.Header[k] = v
	}
	if b.Size == 0 {
		// net/http would send an empty reader chunked
		req.Body, req.GetBody, req.ContentLength = http.NoBody, nil, 0
		return
	}
	// sections of R, which the transport may close: R stays open for the
	// next send, and its opener closes it
	req.ContentLength = b.Size
	req.Header.Set("Expect", "100-continue")
	req.GetBody = func() (io.ReadCloser, error) {
		return io.NopCloser(io.NewSectionReader(b.R, 0, b.Size)), nil
	}
	req.Body, _ = req.GetBody()
}

// Do sends a request to the API path (with its query, if any) and decodes
// a JSON answer into out (when not nil). body is nil (no body), a Sized
// (sent with contentType), or else a value sent JSON-encoded. An answer
// other than 1xx or 2xx is an *Error with the server's "error" text (or
// the whole answer when it has none).
func (c *Client) Do(method, path string, body any, contentType string, out any) error {
	return c.DoContext(context.Background(), method, path, body, contentType, out)
}

// DoContext is Do with a context: cancelling ctx abandons the request.
func (c *Client) DoContext(ctx context.Context, method, path string, body any, contentType string, out any) error {
	var rd io.Reader
	switch b := body.(type) {
	case nil, Sized:
	default:
		// Without json.Marshal's HTML escaping: a page's every <, > and &
		// would take 6 bytes, and markup-heavy HTML would meet the
		// server's --max-body at a sixth of its size.
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(b); err != nil {
			return fmt.Errorf("encode request: %w", err)
		}
		rd, contentType = bytes.NewReader(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), "application/json"
	}
	req, err := http.NewRequestWithContext(ctx, method, c.Server+path, rd)
	if err != nil {
		return fmt.Errorf("request %s: %w", path, err)
	}
	if b, ok := body.(Sized); ok {
		b.prepare(req)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if c.Key != "" {
		req.Header.Set("Authorization", "Bearer "+c.Key)
	}
	req.Header.Set("User-Agent", UserAgent)
	res, err := c.HTTP.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, c.Server+path, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("read the answer of %s: %w", path, err)
	}
	if res.StatusCode >= 300 && res.StatusCode < 400 {
		// a redirect the client did not follow: nothing was done
		return &Error{Status: res.StatusCode, Msg: "redirected to " + res.Header.Get("Location") + "; is --server right?"}
	}
	if res.StatusCode >= 400 {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(raw, &e) != nil || e.Error == "" {
			e.Error = strings.TrimSpace(string(raw))
		}
		return &Error{Status: res.StatusCode, Msg: e.Error}
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("decode the answer of %s: %w", path, err)
		}
	}
	return nil
}
