package hooks

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/pocketbase/pocketbase/apis"
	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites/analytics/statsdb"
	"sitedrop/sites/wire"
)

// notInOpenAPI are the routes sitedrop registers that are not part of the
// README's API table, so not of openapi.json: the web pages and their
// forms (HTML for browsers), and /mcp (MCP over Streamable HTTP, not a
// REST route; described by its own protocol). Paths under /api/ and /_/
// are PocketBase's own (its REST API and dashboard) and skipped by prefix.
var notInOpenAPI = map[string]bool{
	"GET /{$}":                             true, // home page
	"GET /static/{path...}":                true, // the pages' CSS and scripts
	"GET /claim/{slug}":                    true, // claim page
	"POST /claim/{slug}":                   true, // its button
	"GET /auth/login":                      true, // sign-in page
	"POST /auth/login":                     true, // its forms without JavaScript
	"POST /auth/login/code":                true,
	"POST /auth/logout":                    true, // the pages' sign-out button
	"GET /submitted":                       true, // thank-you page of browser form posts
	"GET /account":                         true, // account page and its forms
	"POST /account/keys":                   true,
	"GET /account/keys/{id}/revoke":        true, // API keys: ask, then revoke
	"POST /account/keys/{id}/revoke":       true,
	"GET /account/activity":                true, // the audit log of the account's things
	"GET /account/delete":                  true, // account deletion: what goes, then delete
	"POST /account/delete":                 true,
	"POST /account/sessions/{id}/revoke":   true, // signed-in browsers: sign one out
	"POST /account/sessions/revoke-others": true,
	// the superusers' moderation page, its sign-in and its forms (issue 31)
	"GET /admin":                              true,
	"GET /admin/login":                        true,
	"POST /admin/login":                       true,
	"POST /admin/logout":                      true,
	"POST /admin/reports/{id}/dismiss":        true,
	"POST /admin/sites/{id}/takedown":         true,
	"POST /admin/sites/{id}/restore":          true,
	"GET /admin/sites/{id}/delete":            true, // deleting a site: ask, then delete
	"POST /admin/sites/{id}/delete":           true,
	"POST /admin/sites/{id}/block":            true,
	"POST /admin/accounts/{id}/ban":           true,
	"POST /admin/accounts/{id}/unban":         true,
	"POST /admin/blocks":                      true,
	"POST /admin/blocks/{id}/remove":          true,
	"POST /admin/anon":                        true,
	"GET /favicon.ico":                        true, // the pages' icon
	"GET /robots.txt":                         true, // the web host's crawler rules
	" /":                                      true, // every other path: the 404 (page or JSON)
	"GET /account/sites/{id}":                 true,
	"GET /account/sites/{id}/submissions.csv": true,
	// the site page's other tabs and its confirmations (issue 30)
	"GET /account/sites/{id}/deploys":                                                 true,
	"GET /account/sites/{id}/analytics":                                               true,
	"GET /account/sites/{id}/forms":                                                   true,
	"GET /account/sites/{id}/domains":                                                 true,
	"GET /account/sites/{id}/settings":                                                true,
	"GET /account/sites/{id}/submissions/{subId}/delete":                              true,
	"GET /account/sites/{id}/webhooks/{webhookId}/delete":                             true,
	"POST /account/sites/{id}/notifications":                                          true,
	"POST /account/sites/{id}/webhooks/{webhookId}/delete":                            true,
	"POST /account/sites/{id}/rollback":                                               true,
	"POST /account/sites/{id}/settings":                                               true,
	"POST /account/sites/{id}/protection":                                             true,
	"GET /account/sites/{id}/delete":                                                  true,
	"POST /account/sites/{id}/delete":                                                 true,
	"POST /account/sites/{id}/rename":                                                 true, // the owner's controls
	"POST /account/sites/{id}/pause":                                                  true,
	"POST /account/sites/{id}/resume":                                                 true,
	"POST /account/sites/{id}/submissions/{subId}/delete":                             true,
	"POST /account/sites/{id}/webhooks":                                               true,
	"POST /account/sites/{id}/webhooks/{webhookId}/test":                              true,
	"POST /account/sites/{id}/webhooks/{webhookId}/deliveries/{deliveryId}/redeliver": true,
	// custom domains on the site page
	"POST /account/sites/{id}/domains":                 true,
	"POST /account/sites/{id}/domains/{domain}/verify": true,
	"POST /account/sites/{id}/domains/{domain}/delete": true,
	"GET /llms.txt": true, // the agents' guide, Markdown (links to openapi.json)
	"GET /report":   true, // the public report form (its post, POST /report, is described)
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

// wireBodies pairs the bodies of sitedrop/sites/wire with where
// openapi.json describes them: a component schema's name, or "METHOD
// /path STATUS" for an answer described inline, or "METHOD /path body"
// for a request's body. A value is the body as it is sent: an embedded
// nil pointer is left out, as encoding/json leaves it out (a keyed
// deploy's answer has no Claim).
var wireBodies = []struct {
	v      any
	where  string
	answer bool // sent by the server: a pointer field may be null
}{
	{wire.DeployRef{}, "DeployRef", true},
	{wire.DeployAnswer{}, "DeployAnswer", true},
	{wire.DeployAnswer{Claim: &wire.Claim{}}, "AnonDeployAnswer", true},
	{wire.DeployStatus{}, "DeployStatus", true},
	{wire.DeploySummary{}, "DeploySummary", true},
	{wire.DeploymentList{}, "GET /deploys 200", true},
	{wire.IDMessage{}, "IDMessage", true},
	{wire.DeployRequest{}, "DeployRequest", false},
	{wire.ClaimRequest{}, "POST /deploy/claim body", false},
	{wire.Version{}, "Version", true},
	{wire.VersionList{}, "GET /deploy/{id}/versions 200", true},
	{wire.RollbackRequest{}, "POST /deploy/{id}/rollback body", false},
	{wire.Rollback{}, "POST /deploy/{id}/rollback 200", true},
	{wire.Promote{}, "POST /deploy/{id}/versions/{version}/promote 200", true},
	{wire.VersionFiles{}, "GET /deploy/{id}/versions/{version}/files 200", true},
	{wire.Diff{}, "GET /deploy/{id}/diff 200", true},
	{wire.DiffFile{}, "DiffFile", true},
	{wire.DiffChanged{}, "DiffChanged", true},
	{wire.AliasList{}, "GET /deploy/{id}/aliases 200", true},
	{wire.Alias{}, "Alias", true},
	{wire.AliasDeleted{}, "DELETE /deploy/{id}/aliases/{name} 200", true},
	{wire.RenameRequest{}, "POST /deploy/{id}/rename body", false},
	{wire.Renamed{}, "POST /deploy/{id}/rename 200", true},
	{wire.PauseState{}, "POST /deploy/{id}/pause 200", true},
	{wire.PauseState{}, "POST /deploy/{id}/resume 200", true},
	{wire.TakedownRequest{}, "POST /admin/deploy/{id}/takedown body", false},
	{wire.TakedownState{}, "POST /admin/deploy/{id}/takedown 200", true},
	{wire.TakedownState{}, "POST /admin/deploy/{id}/restore 200", true},
	{wire.BanRequest{}, "POST /admin/users/{id}/ban body", false},
	{wire.BanState{}, "POST /admin/users/{id}/ban 200", true},
	{wire.BanState{}, "POST /admin/users/{id}/unban 200", true},
	{wire.MissingRequest{}, "POST /blobs/missing body", false},
	{wire.Missing{}, "POST /blobs/missing 200", true},
	{wire.Warning{}, "Warning", true},
	{wire.Report{}, "Report", true},
	{wire.BlockRequest{}, "POST /admin/blocklist body", false},
	{wire.Block{}, "Block", true},
	{wire.BlockList{}, "GET /admin/blocklist 200", true},
	{wire.Usage{}, "GET /usage 200", true},
	{wire.UsageLimits{}, "UsageLimits", true},
	{wire.AccountUsage{}, "AccountUsage", true},
	{wire.SiteUsage{}, "SiteUsage", true},
	{wire.AdminUsage{}, "GET /admin/usage 200", true},
	{wire.AbuseReportRequest{}, "POST /report body", false},
	{wire.AbuseReportAnswer{}, "POST /report 201", true},
	// not a wire type, but an answer all the same
	{statsdb.Report{Days: []statsdb.ReportDay{{}}}, "GET /deploy/{id}/analytics 200", true},
}

// TestOpenAPIWireTypes: openapi.json describes each body of
// sitedrop/sites/wire field for field, as encoding/json writes it: the
// same property names, a property required exactly when its field is
// always sent (no omitempty), a JSON type the Go type encodes to, and
// the same again inside arrays and nested objects. Every type of the
// package is checked, directly or inside another.
func TestOpenAPIWireTypes(t *testing.T) {
	doc, _ := loadOpenAPI(t)
	visited := map[string]bool{}
	visit := func(typ reflect.Type) {
		if typ.PkgPath() == "sitedrop/sites/wire" {
			visited[typ.Name()] = true
		}
	}
	for _, b := range wireBodies {
		s, err := describedSchema(doc, b.where)
		if err != nil {
			t.Errorf("%T: %v", b.v, err)
			continue
		}
		for _, msg := range wireDrift(b.where, reflect.ValueOf(b.v), s, b.answer, visit) {
			t.Errorf("%T against openapi.json's %s", b.v, msg)
		}
	}
	names, err := exportedTypes("../sites/wire")
	if err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 {
		t.Fatal("no types found in sites/wire: the walk is broken")
	}
	for _, name := range names {
		if !visited[name] {
			t.Errorf("wire.%s is not checked against openapi.json: add the body it is (or holds it) to wireBodies", name)
		}
	}
}

// TestWireDriftRefuses: wireDrift finds each way a Go type and a schema
// can disagree.
func TestWireDriftRefuses(t *testing.T) {
	type inner struct {
		N int `json:"n"`
	}
	type Embedded struct {
		E string `json:"e"`
	}
	type body struct {
		*Embedded
		A string   `json:"a"`
		B *string  `json:"b"`
		C []inner  `json:"c"`
		D bool     `json:"d,omitempty"`
		X string   `json:"-"`
		L []string `json:"l"`
	}
	const ok = `{"type": "object", "required": ["a", "b", "c", "l"], "properties": {
		"a": {"type": "string"}, "b": {"type": ["string", "null"]},
		"c": {"type": "array", "items": {"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}}},
		"d": {"type": "boolean"}, "l": {"type": "array", "items": {"type": "string"}}}}`
	tests := []struct {
		name   string
		v      any
		schema string
		answer bool
		want   string // in the one message; "" for none
	}{
		{"agree", body{}, ok, true, ""},
		{"a request's pointer needs no null", body{}, strings.Replace(ok, `["string", "null"]`, `"string"`, 1), false, ""},
		{"property missing", body{}, strings.Replace(ok, `"a": {"type": "string"}, `, "", 1), true, `X: field "a" (json:"a") is not a property`},
		{"property extra", body{}, strings.Replace(ok, `"d": {"type": "boolean"}`, `"d": {"type": "boolean"}, "z": {"type": "string"}`, 1), true, `X: property "z" is no field`},
		{"wrong type", body{}, strings.Replace(ok, `"a": {"type": "string"}`, `"a": {"type": "integer"}`, 1), true, "X.a: the Go type string encodes to string, the schema has [integer]"},
		{"required but omitempty", body{}, strings.Replace(ok, `"required": ["a", `, `"required": ["d", "a", `, 1), true, `X.d: required, but the field is left out when empty`},
		{"always sent, not required", body{}, strings.Replace(ok, `"required": ["a", `, `"required": [`, 1), true, `X.a: always sent, but not required`},
		{"answer's pointer may be null", body{}, strings.Replace(ok, `["string", "null"]`, `"string"`, 1), true, "X.b: the field may be null, the schema has [string]"},
		{"nested in an array", body{}, strings.Replace(ok, `"n": {"type": "integer"}`, `"n": {"type": "string"}`, 1), true, "X.c[].n: the Go type int encodes to integer"},
		{"array items", body{}, strings.Replace(ok, `"items": {"type": "string"}`, `"items": {"type": "integer"}`, 1), true, "X.l[]: the Go type string encodes to string"},
		{"embedded pointer set", body{Embedded: &Embedded{}}, ok, true, `X: field "e" (json:"e") is not a property`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s openapi3.Schema
			if err := json.Unmarshal([]byte(tt.schema), &s); err != nil {
				t.Fatal(err)
			}
			got := wireDrift("X", reflect.ValueOf(tt.v), &s, tt.answer, func(reflect.Type) {})
			switch {
			case tt.want == "" && len(got) != 0:
				t.Fatalf("got %q, want nothing", got)
			case tt.want != "" && (len(got) != 1 || !strings.Contains(got[0], tt.want)):
				t.Fatalf("got %q, want one message with %q", got, tt.want)
			}
		})
	}
}

// describedSchema is the schema openapi.json gives at where (see
// wireBodies).
func describedSchema(doc *openapi3.T, where string) (*openapi3.Schema, error) {
	f := strings.Fields(where)
	if len(f) == 1 {
		ref := doc.Components.Schemas[where]
		if ref == nil || ref.Value == nil {
			return nil, fmt.Errorf("no component schema %q", where)
		}
		return ref.Value, nil
	}
	if len(f) != 3 {
		return nil, fmt.Errorf("%q: want a schema name, METHOD /path STATUS or METHOD /path body", where)
	}
	item := doc.Paths.Value(f[1])
	if item == nil || item.GetOperation(f[0]) == nil {
		return nil, fmt.Errorf("%q: no such operation", where)
	}
	op := item.GetOperation(f[0])
	var content openapi3.Content
	if f[2] == "body" {
		if op.RequestBody == nil || op.RequestBody.Value == nil {
			return nil, fmt.Errorf("%q: no request body", where)
		}
		content = op.RequestBody.Value.Content
	} else {
		status, err := strconv.Atoi(f[2])
		if err != nil {
			return nil, fmt.Errorf("%q: %w", where, err)
		}
		res := op.Responses.Status(status)
		if res == nil || res.Value == nil {
			return nil, fmt.Errorf("%q: no such answer", where)
		}
		content = res.Value.Content
	}
	mt := content.Get("application/json")
	if mt == nil || mt.Schema == nil || mt.Schema.Value == nil {
		return nil, fmt.Errorf("%q: no application/json schema", where)
	}
	return mt.Schema.Value, nil
}

// wireField is a JSON field of a struct, as encoding/json sees it.
type wireField struct {
	name, tag string
	v         reflect.Value
	omit      bool // omitempty or omitzero: left out when empty
}

// jsonFields lists the fields encoding/json writes of v, a struct:
// embedded structs flattened, an embedded nil pointer's fields left out.
// visit sees every struct type met.
func jsonFields(v reflect.Value, visit func(reflect.Type)) []wireField {
	visit(v.Type())
	var out []wireField
	for i := range v.NumField() {
		sf, fv := v.Type().Field(i), v.Field(i)
		tag := sf.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if tag == "-" || (!sf.IsExported() && !sf.Anonymous) {
			continue
		}
		if sf.Anonymous && name == "" {
			if fv.Kind() == reflect.Pointer {
				visit(fv.Type().Elem())
				if fv.IsNil() {
					continue // left out, as encoding/json does
				}
				fv = fv.Elem()
			}
			if fv.Kind() == reflect.Struct {
				out = append(out, jsonFields(fv, visit)...)
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		omit := slices.Contains(strings.Split(opts, ","), "omitempty") || slices.Contains(strings.Split(opts, ","), "omitzero")
		out = append(out, wireField{name: name, tag: tag, v: fv, omit: omit})
	}
	return out
}

// jsonType is the JSON type a value of typ encodes to, and whether it
// may be null.
func jsonType(typ reflect.Type) (string, bool) {
	switch typ.Kind() {
	case reflect.Pointer:
		elem, _ := jsonType(typ.Elem())
		return elem, true
	case reflect.String:
		return "string", false
	case reflect.Bool:
		return "boolean", false
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer", false
	case reflect.Float32, reflect.Float64:
		return "number", false
	case reflect.Slice, reflect.Array:
		return "array", false
	case reflect.Struct, reflect.Map:
		return "object", false
	}
	return typ.Kind().String(), false
}

// wireDrift compares v, a value of a wire type, with s, the schema that
// describes it at where, and returns a message for each difference: see
// TestOpenAPIWireTypes. answer tells a body the server sends, where a
// nil pointer is sent as null and the schema must allow it.
func wireDrift(where string, v reflect.Value, s *openapi3.Schema, answer bool, visit func(reflect.Type)) []string {
	for s.Type == nil && len(s.AllOf) == 1 && s.AllOf[0].Value != nil {
		s = s.AllOf[0].Value // {"allOf": [{"$ref": …}], "description": …}
	}
	typ := v.Type()
	if jt, ok := v.Interface().(interface{ JSONTypes() []string }); ok {
		// a type that encodes itself says which JSON types it is sent as
		visit(typ)
		var msgs []string
		for _, want := range jt.JSONTypes() {
			if !schemaAllows(s, want) {
				msgs = append(msgs, fmt.Sprintf("%s: the Go type %s encodes to %s, which the schema does not allow", where, typ, want))
			}
		}
		return msgs
	}
	want, nullable := jsonType(typ)
	if !s.Type.Includes(want) {
		return []string{fmt.Sprintf("%s: the Go type %s encodes to %s, the schema has %v", where, typ, want, s.Type.Slice())}
	}
	if nullable && answer && !s.Type.Includes("null") {
		return []string{fmt.Sprintf("%s: the field may be null, the schema has %v", where, s.Type.Slice())}
	}
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
		v = reflect.Zero(typ)
	}
	var msgs []string
	switch typ.Kind() {
	case reflect.Slice, reflect.Array:
		if s.Items == nil || s.Items.Value == nil {
			return []string{where + ": an array without items"}
		}
		msgs = append(msgs, wireDrift(where+"[]", reflect.Zero(typ.Elem()), s.Items.Value, answer, visit)...)
	case reflect.Struct:
		fields := jsonFields(v, visit)
		named := map[string]bool{}
		for _, f := range fields {
			named[f.name] = true
			p := s.Properties[f.name]
			if p == nil || p.Value == nil {
				msgs = append(msgs, fmt.Sprintf("%s: field %q (json:%q) is not a property", where, f.name, f.tag))
				continue
			}
			required := slices.Contains(s.Required, f.name)
			switch {
			case required && f.omit:
				msgs = append(msgs, fmt.Sprintf("%s.%s: required, but the field is left out when empty", where, f.name))
			case !required && !f.omit:
				msgs = append(msgs, fmt.Sprintf("%s.%s: always sent, but not required", where, f.name))
			}
			msgs = append(msgs, wireDrift(where+"."+f.name, f.v, p.Value, answer, visit)...)
		}
		for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
			if !named[name] {
				msgs = append(msgs, fmt.Sprintf("%s: property %q is no field of %s", where, name, typ))
			}
		}
	}
	return msgs
}

// schemaAllows tells whether s allows a value of the JSON type typ: in
// its type, one of its oneOf branches, or its const.
func schemaAllows(s *openapi3.Schema, typ string) bool {
	if s.Type.Includes(typ) {
		return true
	}
	for _, b := range s.OneOf {
		if b.Value != nil && schemaAllows(b.Value, typ) {
			return true
		}
	}
	switch s.Const.(type) {
	case string:
		return typ == "string"
	case bool:
		return typ == "boolean"
	}
	return false
}

// exportedTypes lists the exported types declared in the Go files (tests
// aside) of the package in dir.
func exportedTypes(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var names []string
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("reading the wire types: %w", err)
		}
		for _, decl := range f.Decls {
			if gd, ok := decl.(*ast.GenDecl); ok && gd.Tok == token.TYPE {
				for _, spec := range gd.Specs {
					if name := spec.(*ast.TypeSpec).Name.Name; ast.IsExported(name) {
						names = append(names, name)
					}
				}
			}
		}
	}
	return names, nil
}
