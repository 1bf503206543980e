package hooks

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pocketbase/pocketbase/apis"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/router"

	"sitedrop/hooks/server"
	"sitedrop/sites/agent"
	"sitedrop/sites/client"
	"sitedrop/sites/intake"
)

// mcpEndpoint is the MCP endpoint: what reads its bodies and what its
// in-process API calls need.
type mcpEndpoint struct {
	// maxBody is --max-body, the largest MCP body as the largest deploy's.
	maxBody int64
	// guards read the bodies and hold them against the memory budget.
	guards *intake.Guards
	// proxies tell the caller's client IP, passed on to the API.
	proxies server.TrustedProxies
}

// bindMCP serves the MCP tools (see sites/agent) over stateless Streamable
// HTTP at /mcp, on the web host (site hosts never reach the routes). The
// tools call the API in process, with the caller's key and client IP, so
// they meet the API's own limits and errors. The body is read as deploy
// bodies are, and it and the answers are held against the deploy memory
// budget (see mcpServe). It returns the API handler the tools call, for
// register to complete once the server's handler is built.
func bindMCP(r *router.Router[*core.RequestEvent], m *mcpEndpoint) *agent.LazyHandler {
	api := &agent.LazyHandler{Build: r.BuildMux}
	h := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		return agent.NewServer(m.inProcessClient(r, api), nil)
	}, &mcp.StreamableHTTPOptions{
		Stateless:           true, // any server of a cluster answers any request
		JSONResponse:        true, // one answer per request: no event stream to keep open
		MaxRequestBodyBytes: m.maxBody,
		// The SDK refuses a non-loopback Host on a loopback listener (DNS
		// rebinding): that is every request behind a local reverse proxy.
		// The tools need the caller's key for anything but an anonymous
		// deploy, which POST /deploy allows anyone anyway.
		DisableLocalhostProtection: true,
	})
	r.Any("/mcp", m.mcpServe(h)).Unbind(apis.DefaultBodyLimitMiddlewareId)
	return api
}

// mcpAnswerAllowance is what an MCP request reserves for its answer,
// with its body's memory, before anything is dispatched: the tools/list
// answer (10 KiB) and a tool's usual answer (the API's answer recorded,
// the client's copy of it, and the MCP answer that carries it again) fit
// in it. A longer answer (a deploy report listing hundreds of findings)
// counts past it as it is made (see intake.AnswerMemory).
const mcpAnswerAllowance = 64 << 10

// mcpMemoryFactor times its body is what an MCP request holds of the
// deploy memory budget once the body has come: the body as mcpServe read
// it, the SDK's two copies (it reads the body once to set the session up
// and again to serve it), and the tool's decoded arguments. The API
// request a tool makes reserves its own; the answers come on top (see
// intake.AnswerMemory).
const mcpMemoryFactor = 4

// mcpServe answers an MCP request with h. A POST body is read first, as
// deploy bodies are (intake.Guards.Body: --max-body, the minimum rate after the
// grace, each byte held of the memory budget as it comes), and must be
// one JSON-RPC message (agent.CheckMessage: a batch is refused before the
// SDK sees it); then the rest of its memory and an allowance for its
// answers are reserved (503 with Retry-After when the budget stays
// spent). That is the last refusal: once h has the request, a tool may
// act, and its answers are counted without one (see intake.AnswerMemory). All of
// it is given back when the request ends.
func (m *mcpEndpoint) mcpServe(h http.Handler) func(e *core.RequestEvent) error {
	return func(e *core.RequestEvent) error {
		mem := intake.NewAnswerMemory(m.guards.MemoryLease(e.Request.Context()))
		defer mem.End()
		if e.Request.Method == http.MethodPost {
			body, err := m.readMCPBody(e, mem.Lease())
			if err != nil {
				return err
			}
			mem.Allow(mcpAnswerAllowance)
			e.Request.Body = io.NopCloser(bytes.NewReader(body))
			e.Request.ContentLength = int64(len(body))
		}
		w := agent.NewAnswerWriter(e.Response, mem.Count)
		h.ServeHTTP(w, e.Request.WithContext(context.WithValue(e.Request.Context(), mcpMemoryKey{}, mem)))
		w.Finish()
		return nil
	}
}

// readMCPBody reads an MCP request's body (see mcpServe), checks that it
// is one message, and reserves the memory the SDK will take for it and
// mcpAnswerAllowance, in one wait.
func (m *mcpEndpoint) readMCPBody(e *core.RequestEvent, lease *intake.Lease) ([]byte, error) {
	g, err := m.guards.Body(e.Response, e.Request, m.maxBody, lease)
	if err != nil {
		return nil, err
	}
	body, err := g.ReadAll()
	if err != nil {
		return nil, err
	}
	if err := agent.CheckMessage(body); err != nil {
		return nil, err
	}
	if err := lease.Reserve((mcpMemoryFactor-1)*int64(len(body)) + mcpAnswerAllowance); err != nil {
		return nil, err
	}
	return body, nil
}

// mcpMemoryKey is the context key of an MCP request's answer memory, for the
// in-process API client of its tools.
type mcpMemoryKey struct{}

// inProcessClient is an API client that sends r's key and serves its
// requests with the app's own handler, as if they came from r's client.
func (m *mcpEndpoint) inProcessClient(r *http.Request, api *agent.LazyHandler) *client.Client {
	mem, _ := r.Context().Value(mcpMemoryKey{}).(*intake.AnswerMemory)
	t := &agent.InProcess{
		Handler:       api.Handler,
		Host:          r.Host,
		RemoteAddr:    net.JoinHostPort(m.proxies.ClientIP(r), "0"),
		Authorization: r.Header.Get("Authorization"),
		Count:         mem.Count, // nil mem: nothing counted
	}
	return t.Client(bearerToken(r))
}
