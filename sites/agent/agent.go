// Package agent is sitedrop's MCP server: the tools an AI agent calls to
// publish and manage sites (deploy, update, get_status, list_deploys,
// teardown, claim, get_submissions, delete_submission, list_versions,
// rollback, promote, analytics, whoami). Every tool calls sitedrop's own HTTP API through
// sites/client, so limits, errors and lifecycle rules are exactly the
// API's; the transport (Streamable HTTP at /mcp, or stdio for `sitedrop
// mcp`) is its callers' concern. For /mcp it gives them the pieces that
// are not routing: CheckMessage (one JSON-RPC message a body, no batch),
// AnswerWriter (the SDK's errors in the API's {"error": "..."} shape,
// answers counted as they are written) and InProcess (the tools' API
// calls served by the server's own handler, as from the caller):
//
//	t := &agent.InProcess{Handler: h.Handler, Host: r.Host, RemoteAddr: addr, Authorization: auth}
//	srv := agent.NewServer(t.Client(key, sent), nil)
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"sitedrop/sites/client"
)

// Options tune a server.
type Options struct {
	// Version is the server version told to clients ("" for "dev").
	Version string
	// KeyHelp tells, in the error of a keyed tool called without a key,
	// how to give one (for example "send Authorization: Bearer <key>").
	KeyHelp string
}

// DefaultKeyHelp is how an MCP client over HTTP gives its key.
const DefaultKeyHelp = "send the header Authorization: Bearer <key> with the MCP requests (a key comes from `sitedrop login`, or POST /auth/otp then /auth/verify)"

// instructions is the server's guide for the model.
const instructions = `sitedrop publishes static web sites. Call deploy with "html" (one page) or
"files" (a whole site: path, content, encoding "base64" for binary) to get a live URL.
Without an API key a deploy is anonymous: it expires, and its claim_url lets a user keep it.
With a key, update replaces a site's files, list_deploys and get_status describe sites,
list_versions and rollback go back in time. With a key, deploy or update with draft: true
saves a version without making it live: check it at the answer's preview_url, then promote it
(alias: "staging" also points staging--<slug> at it; message describes it). analytics counts a site's visits per day,
get_submissions reads the site's form posts
(a form posts to {{SUBMIT_URL}}), teardown deletes a site (confirm: true).`

// schemas caches the tools' schemas across servers: /mcp builds one server
// per request.
var schemas = mcp.NewSchemaCache()

// NewServer returns an MCP server whose tools call the API through c; a
// c without a Key makes anonymous deploys, and its keyed tools answer an
// error result saying how to give a key.
func NewServer(c *client.Client, opts *Options) *mcp.Server {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	if o.KeyHelp == "" {
		o.KeyHelp = DefaultKeyHelp
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "sitedrop", Title: "sitedrop", Version: o.Version},
		&mcp.ServerOptions{Instructions: instructions, SchemaCache: schemas})
	t := &tools{c: c, keyHelp: o.KeyHelp}
	t.addDeployTools(s)
	t.addSiteTools(s)
	t.addControlTools(s)
	t.addAnalyticsTool(s)
	return s
}

// tools holds what every tool handler needs.
type tools struct {
	c       *client.Client
	keyHelp string
}

// Answer is the API's JSON answer, the structured content of a result.
type Answer = map[string]any

// call sends a request to the API and returns its JSON answer. An API
// error (a 4xx or 5xx {"error"}) comes back as an error with the API's
// message, which the SDK turns into an error result.
func (t *tools) call(ctx context.Context, method, path string, body any) (Answer, error) {
	var ans Answer
	if err := t.c.DoContext(ctx, method, path, body, "", &ans); err != nil {
		var apiErr *client.Error
		if errors.As(err, &apiErr) {
			return nil, apiErr
		}
		return nil, fmt.Errorf("calling the sitedrop API: %w", err)
	}
	if ans == nil {
		ans = Answer{}
	}
	return ans, nil
}

// callAs is call that also decodes the answer into typed, a body of
// sitedrop/sites/wire, for the tool's text; the structured content stays
// the answer as the API gave it.
func (t *tools) callAs(ctx context.Context, method, path string, body, typed any) (Answer, error) {
	ans, err := t.call(ctx, method, path, body)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(ans)
	if err == nil {
		err = json.Unmarshal(raw, typed)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the sitedrop API's answer: %w", err)
	}
	return ans, nil
}

// keyed is the error of a keyed tool called without a key, nil with one.
func (t *tools) keyed(tool string) error {
	if t.c.Key != "" {
		return nil
	}
	return fmt.Errorf("this tool needs an API key: %s (without one, only an anonymous deploy works); %s was not run", t.keyHelp, tool)
}

// text is a result whose content is the readable lines; the SDK adds the
// answer as structured content.
func text(lines ...string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(lines, "\n")}}}
}

// idPath is the API path prefix and the escaped id, refusing an empty id.
func idPath(prefix, id string) (string, error) {
	id = strings.TrimSpace(id)
	if id == "" {
		return "", errors.New("id is required: the deployment's id, as deploy and list_deploys give it")
	}
	return prefix + url.PathEscape(id), nil
}

// str is a string field of an answer ("" when absent or not a string).
func str(a Answer, key string) string {
	s, _ := a[key].(string)
	return s
}

// ptr returns a pointer to v.
func ptr[T any](v T) *T { return &v }
