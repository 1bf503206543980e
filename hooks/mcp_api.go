package hooks

import (
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pocketbase/pocketbase/apis"
	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites/agent"
	"sitedrop/sites/client"
)

// bindMCP serves the MCP tools (see sites/agent) over stateless Streamable
// HTTP at /mcp, on the web host (site hosts never reach the routes). The
// tools call the API in process, with the caller's key and client IP, so
// they meet the API's own limits and errors. The SDK bounds the body to
// --max-body, as a JSON deploy is bounded, and the body is held against
// the deploy memory budget (see mcpServe). It returns the API handler the
// tools call, for register to complete once the server's handler is built.
func bindMCP(sd *sitedrop, se *core.ServeEvent) *apiMux {
	api := &apiMux{router: se.Router}
	h := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		return agent.NewServer(sd.inProcessClient(r, api), nil)
	}, &mcp.StreamableHTTPOptions{
		Stateless:           true, // any server of a cluster answers any request
		JSONResponse:        true, // one answer per request: no event stream to keep open
		MaxRequestBodyBytes: sd.cfg.MaxBody,
		// The SDK refuses a non-loopback Host on a loopback listener (DNS
		// rebinding): that is every request behind a local reverse proxy.
		// The tools need the caller's key for anything but an anonymous
		// deploy, which POST /deploy allows anyone anyway.
		DisableLocalhostProtection: true,
	})
	se.Router.Any("/mcp", sd.mcpServe(h)).Unbind(apis.DefaultBodyLimitMiddlewareId)
	return api
}

// mcpMemoryFactor times its body is what an MCP request holds of the
// deploy memory budget: the body the SDK reads whole, and the tool's
// decoded arguments. (The API request a tool makes reserves its own.)
const mcpMemoryFactor = 2

// mcpServe answers an MCP request with h once its memory is reserved
// (503 with Retry-After when the budget stays spent), and gives the
// memory back when done. A body of unknown length counts as --max-body.
func (sd *sitedrop) mcpServe(h http.Handler) func(e *core.RequestEvent) error {
	return func(e *core.RequestEvent) error {
		lease := sd.memoryLease(e)
		defer lease.release()
		n := e.Request.ContentLength
		if n < 0 || n > sd.cfg.MaxBody {
			n = sd.cfg.MaxBody // more is refused by the SDK, unread
		}
		if err := lease.reserve(mcpMemoryFactor * n); err != nil {
			return err
		}
		w := &mcpErrorWriter{ResponseWriter: e.Response}
		h.ServeHTTP(w, e.Request)
		w.finish()
		return nil
	}
}

// inProcessClient is an API client that sends r's key and serves its
// requests with the app's own handler, as if they came from r's client.
func (sd *sitedrop) inProcessClient(r *http.Request, api *apiMux) *client.Client {
	key, sent := bearerToken(r)
	if sent && key == "" {
		// not a bearer key: the API's 401, never an anonymous deploy
		key = "-"
	}
	return &client.Client{
		Server: "http://" + r.Host,
		Key:    key,
		HTTP: &http.Client{Transport: &inProcess{
			api:           api,
			host:          r.Host,
			remoteAddr:    net.JoinHostPort(sd.proxies.clientIP(r), "0"),
			authorization: r.Header.Get("Authorization"),
		}},
	}
}

// apiMux is the app's HTTP handler: the one the server uses, or, where
// no server was started (a test harness), one built from the same router
// at first use.
type apiMux struct {
	router interface {
		BuildMux() (http.Handler, error)
	}
	once sync.Once
	h    http.Handler
	err  error
}

// use sets the handler the server uses, when there is one.
func (m *apiMux) use(h http.Handler) {
	if h != nil {
		m.once.Do(func() { m.h = h })
	}
}

// handler returns the app's handler.
func (m *apiMux) handler() (http.Handler, error) {
	m.once.Do(func() { m.h, m.err = m.router.BuildMux() })
	return m.h, m.err
}

// inProcess is an http.RoundTripper that answers a request with the app's
// handler in this process: no socket, no TLS. The request arrives from
// remoteAddr (the MCP caller's address, so per-IP limits count the caller)
// at host (the web host the MCP request came to), with the MCP request's
// Authorization header as it was sent.
type inProcess struct {
	api           *apiMux
	host          string
	remoteAddr    string
	authorization string
}

// RoundTrip serves req and returns the recorded answer.
func (t *inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	h, err := t.api.handler()
	if err != nil {
		return nil, err
	}
	in := req.Clone(req.Context())
	in.URL = &url.URL{Path: req.URL.Path, RawPath: req.URL.RawPath, RawQuery: req.URL.RawQuery}
	in.RequestURI = in.URL.RequestURI()
	in.Host = t.host
	in.RemoteAddr = t.remoteAddr
	if t.authorization != "" {
		in.Header.Set("Authorization", t.authorization)
	}
	if in.Body == nil {
		in.Body = http.NoBody
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, in)
	res := rec.Result()
	res.Request = req
	return res, nil
}
