package hooks

import (
	"reflect"
	"strings"
	"testing"

	"github.com/pocketbase/pocketbase/apis"
	"github.com/pocketbase/pocketbase/core"
)

// notInOpenAPI are the routes sitedrop registers that are not part of the
// README's API table, so not of openapi.json: the web pages and their
// forms (HTML for browsers), and /mcp (MCP over Streamable HTTP, not a
// REST route; described by its own protocol). Paths under /api/ and /_/
// are PocketBase's own (its REST API and dashboard) and skipped by prefix.
var notInOpenAPI = map[string]bool{
	"GET /{$}":                                true, // home page
	"GET /static/{path...}":                   true, // the pages' CSS and scripts
	"GET /claim/{slug}":                       true, // claim page
	"POST /claim/{slug}":                      true, // its button
	"GET /auth/login":                         true, // sign-in page
	"POST /auth/login":                        true, // its forms without JavaScript
	"POST /auth/login/code":                   true,
	"POST /auth/logout":                       true, // the pages' sign-out button
	"GET /submitted":                          true, // thank-you page of browser form posts
	"GET /account":                            true, // account page and its forms
	"POST /account/keys":                      true,
	"POST /account/keys/{id}/revoke":          true,
	"GET /account/sessions/{id}/revoke":       true, // signed-in browsers: ask, then revoke
	"POST /account/sessions/{id}/revoke":      true,
	"POST /account/sessions/revoke-others":    true,
	"GET /favicon.ico":                        true, // the pages' icon
	" /":                                      true, // every other path: the 404 (page or JSON)
	"GET /account/sites/{id}":                 true,
	"GET /account/sites/{id}/submissions.csv": true,
	"POST /account/sites/{id}/notifications":  true,
	"POST /account/sites/{id}/webhooks/{webhookId}/delete":                            true,
	"POST /account/sites/{id}/rollback":                                               true,
	"POST /account/sites/{id}/settings":                                               true,
	"POST /account/sites/{id}/protection":                                             true,
	"GET /account/sites/{id}/delete":                                                  true,
	"POST /account/sites/{id}/delete":                                                 true,
	"POST /account/sites/{id}/submissions/{subId}/delete":                             true,
	"POST /account/sites/{id}/webhooks":                                               true,
	"POST /account/sites/{id}/webhooks/{webhookId}/test":                              true,
	"POST /account/sites/{id}/webhooks/{webhookId}/deliveries/{deliveryId}/redeliver": true,
	// custom domains on the site page
	"POST /account/sites/{id}/domains":                 true,
	"POST /account/sites/{id}/domains/{domain}/verify": true,
	"POST /account/sites/{id}/domains/{domain}/delete": true,
	"GET /llms.txt": true, // the agents' guide, Markdown (links to openapi.json)
	// MCP (issue 15's other half): one endpoint speaking JSON-RPC.
	"POST /mcp":   true,
	"GET /mcp":    true,
	"DELETE /mcp": true,
	" /mcp":       true,
}

// registeredRoutes lists the routes on app's router after sitedrop's
// OnServe: "METHOD /path" ("" method for Any). PocketBase's router keeps
// its routes in an unexported tree; reflection walks it (reading only
// exported Route fields and group prefixes).
func registeredRoutes(t *testing.T, app core.App) []string {
	t.Helper()
	r, err := apis.NewRouter(app)
	if err != nil {
		t.Fatal(err)
	}
	se := &core.ServeEvent{App: app, Router: r}
	if err := app.OnServe().Trigger(se, func(*core.ServeEvent) error { return nil }); err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(g reflect.Value, prefix string)
	walk = func(g reflect.Value, prefix string) {
		prefix += g.FieldByName("Prefix").String()
		kids := g.FieldByName("children")
		for i := range kids.Len() {
			kid := kids.Index(i).Elem().Elem() // any → *T → T
			if kid.FieldByName("children").IsValid() {
				walk(kid, prefix)
				continue
			}
			out = append(out, kid.FieldByName("Method").String()+" "+prefix+kid.FieldByName("Path").String())
		}
	}
	walk(reflect.ValueOf(r.RouterGroup).Elem(), "")
	if len(out) == 0 {
		t.Fatal("no routes found: has PocketBase's router changed shape?")
	}
	return out
}

// TestOpenAPIDrift: every API route sitedrop registers is described in
// openapi.json, and every described operation is a registered route. A
// route for any method (the 405 answers) needs its path described.
func TestOpenAPIDrift(t *testing.T) {
	app, _ := newFixtureApp(t)
	defer app.Cleanup()
	doc, _ := loadOpenAPI(t)

	registered, seen := map[string]bool{}, map[string]bool{}
	for _, rt := range registeredRoutes(t, app) {
		seen[rt] = true
		method, path, _ := strings.Cut(rt, " ")
		if strings.HasPrefix(path, "/api/") || path == "/_" || strings.HasPrefix(path, "/_/") || notInOpenAPI[rt] {
			continue
		}
		registered[rt] = true
		item := doc.Paths.Value(path)
		switch {
		case item == nil:
			t.Errorf("route %q: its path is not in openapi.json", rt)
		case method != "" && item.GetOperation(method) == nil:
			t.Errorf("route %q: the method is not in openapi.json", rt)
		}
	}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			if !registered[method+" "+path] {
				t.Errorf("openapi.json describes %s %s: no such route", method, path)
			}
		}
	}
	for rt := range notInOpenAPI {
		if !seen[rt] && !strings.HasSuffix(rt, " /mcp") { // /mcp lands with its own branch
			t.Errorf("notInOpenAPI names %q: no such route (remove it)", rt)
		}
	}
	if !registered["POST /deploy"] {
		t.Error("POST /deploy not seen: the walk misses routes")
	}
}
