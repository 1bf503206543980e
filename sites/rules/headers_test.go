package rules

import (
	"reflect"
	"strings"
	"testing"
)

// TestParseHeadersNetlifyFixtures parses netlify/build's headers-parser
// fixtures and compares with that repository's expected outputs
// (tests/line-parser.test.ts and, for duplicate, merge.ts's rule).
func TestParseHeadersNetlifyFixtures(t *testing.T) {
	one := func(line int, name, value string) []HeaderRule {
		return []HeaderRule{{Pattern: "/path", Line: line, Headers: []Header{{name, value}}}}
	}
	cases := []struct {
		name   string
		want   []HeaderRule
		reason string
	}{
		{"trim_line_path", nil, ""},
		{"trim_line_values", one(1, "test", "one"), ""},
		{"empty_line", one(1, "test", "one"), ""},
		{"comment", one(1, "test", "one"), ""},
		{"success", one(1, "test", "one"), ""},
		{"no_colon", nil, `not a "Name: value" header line`},
		{"trim_name", one(1, "test", "one"), ""},
		{"trim_value", one(1, "test", "one"), ""},
		{"multiple_values", one(1, "test", "one, two"), ""},
		{"duplicate", []HeaderRule{
			{Pattern: "/path", Line: 1, Headers: []Header{{"test", "one"}}},
			{Pattern: "/path", Line: 4, Headers: []Header{{"test", "three"}}},
		}, ""},
		{"invalid_value_name", nil, "missing header name"},
		{"invalid_value_string", nil, "missing header value"},
		{"invalid_for_order", nil, "must come before the headers"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, warns := ParseHeaders(readFixture(t, "headers", tc.name))
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("rules:\n got %+v\nwant %+v", got, tc.want)
			}
			if tc.reason == "" && len(warns) > 0 {
				t.Errorf("unexpected warnings %+v", warns)
			}
			if tc.reason != "" && (len(warns) != 1 || !strings.Contains(warns[0].Reason, tc.reason) || warns[0].File != HeadersFile) {
				t.Errorf("warnings %+v, want one %q", warns, tc.reason)
			}
		})
	}
	// Netlify's duplicate rule: the later block wins for the same name.
	got, _ := ParseHeaders(readFixture(t, "headers", "duplicate"))
	if m := CompileHeaders(got).Match("/path"); !reflect.DeepEqual(m.Headers, []Header{{"test", "three"}}) {
		t.Errorf("duplicate merged to %+v", m.Headers)
	}
}

// TestParseHeadersLines covers validation: names, values, reserved
// headers, Basic-Auth syntax, and the limits.
func TestParseHeadersLines(t *testing.T) {
	cases := []struct{ line, reason string }{
		{"X Bad: v", `invalid header name "X Bad"`},
		{"X-Nul: a\x00b", "control character"},
		{"X-Cr: a\rb", "control character"},
		{"Content-Length: 5", "set by the server"},
		{"transfer-encoding: chunked", "set by the server"},
		{"Set-Cookie: a=b; Domain=example.com", "sites set no cookies"},
		{"X-Content-Type-Options: sniff", "keeps nosniff"},
		{"ETag: \"x\"", "strong ETag"},
		{"Vary: Cookie", "Accept-Encoding"},
		{"Basic-Auth: nocolon", "Basic-Auth wants user:password pairs"},
		{"Basic-Auth: :pw", "Basic-Auth wants user:password pairs"},
		{"https://a.example/*", "host rules wait for custom domains"},
	}
	for _, tc := range cases {
		rules, warns := ParseHeaders([]byte("/p\n  " + tc.line + "\n"))
		if len(rules) != 0 || len(warns) != 1 || !strings.Contains(warns[0].Reason, tc.reason) || warns[0].Line != 2 {
			t.Errorf("%q: %+v %+v, want %q", tc.line, rules, warns, tc.reason)
		}
		if strings.HasPrefix(tc.line, "Basic-Auth") && strings.Contains(warns[0].Text, "pw") {
			t.Errorf("a Basic-Auth warning shows the credentials: %q", warns[0].Text)
		}
	}
	// multi-line values and Netlify's comma normalization
	rules, warns := ParseHeaders([]byte("/*\n  Cache-Control: max-age=0 ,no-cache\n  cache-control: no-store\n  Basic-Auth: a:x,y\n  Basic-Auth: b:z\n"))
	want := []Header{{"Cache-Control", "max-age=0, no-cache, no-store"}, {"Basic-Auth", "a:x,y b:z"}}
	if len(warns) != 0 || len(rules) != 1 || !reflect.DeepEqual(rules[0].Headers, want) {
		t.Errorf("joined: %+v %+v", rules, warns)
	}
	// a bad path skips its block
	rules, warns = ParseHeaders([]byte("/a?x\n  X-A: 1\n/b\n  X-B: 2\n"))
	if len(rules) != 1 || rules[0].Pattern != "/b" || len(warns) != 2 {
		t.Errorf("bad path: %+v %+v", rules, warns)
	}
	// limits
	var sb strings.Builder
	sb.WriteString("/p\n")
	for i := range MaxHeadersPerBlock + 1 {
		sb.WriteString("X-H" + strings.Repeat("a", i) + ": v\n")
	}
	rules, warns = ParseHeaders([]byte(sb.String()))
	if len(rules[0].Headers) != MaxHeadersPerBlock || len(warns) != 1 {
		t.Errorf("headers cap: %d, %+v", len(rules[0].Headers), warns)
	}
	sb.Reset()
	sb.WriteString("/p\n")
	for range 3 {
		sb.WriteString("X-Long: " + strings.Repeat("v", 4000) + "\n")
	}
	rules, warns = ParseHeaders([]byte(sb.String()))
	if len(rules[0].Headers[0].Value) > MaxHeaderValueBytes || len(warns) != 1 {
		t.Errorf("value cap: %d bytes, %+v", len(rules[0].Headers[0].Value), warns)
	}
	sb.Reset()
	for range MaxHeaderBlocks + 1 {
		sb.WriteString("/p\n  X-A: 1\n")
	}
	rules, warns = ParseHeaders([]byte(sb.String()))
	if len(rules) != MaxHeaderBlocks || len(warns) != 1 {
		t.Errorf("blocks cap: %d, %+v", len(rules), warns)
	}
}

// TestHeadersMatch covers path patterns (case-insensitive, splats,
// placeholders), merging across blocks and Basic-Auth.
func TestHeadersMatch(t *testing.T) {
	const file = `
/*
  X-Frame-Options: DENY
  X-All: yes
/templates/index.html
  X-Frame-Options: SAMEORIGIN
/assets/*
  Cache-Control: public, max-age=31536000, immutable
/*.js
  X-Js: 1
/blog/:slug
  X-Blog: post
/protected/*
  Basic-Auth: alice:s3cret bob:hunter2
/
  X-Root: 1
`
	rs, warns := ParseHeaders([]byte(file))
	if len(warns) > 0 {
		t.Fatal(warns)
	}
	h := CompileHeaders(rs)
	get := func(m Matched, name string) string {
		for _, hd := range m.Headers {
			if hd.Name == name {
				return hd.Value
			}
		}
		return ""
	}
	cases := []struct{ path, name, want string }{
		{"/", "X-All", "yes"},
		{"/", "X-Root", "1"},
		{"/x", "X-Root", ""},
		{"/templates/index.html", "X-Frame-Options", "SAMEORIGIN"},
		{"/TEMPLATES/Index.HTML", "X-Frame-Options", "SAMEORIGIN"},
		{"/templates/other.html", "X-Frame-Options", "DENY"},
		{"/assets", "Cache-Control", "public, max-age=31536000, immutable"},
		{"/assets/", "Cache-Control", "public, max-age=31536000, immutable"},
		{"/assets/a/b.css", "Cache-Control", "public, max-age=31536000, immutable"},
		{"/assetsx", "Cache-Control", ""},
		{"/app.js", "X-Js", "1"},
		{"/deep/dir/app.JS", "X-Js", "1"},
		{"/app.json", "X-Js", ""},
		{"/blog/hello", "X-Blog", "post"},
		{"/blog/hello/", "X-Blog", "post"},
		{"/blog", "X-Blog", ""},
		{"/blog/a/b", "X-Blog", ""},
	}
	for _, tc := range cases {
		if got := get(h.Match(tc.path), tc.name); got != tc.want {
			t.Errorf("%s %s: got %q, want %q", tc.path, tc.name, got, tc.want)
		}
	}
	m := h.Match("/protected/file.pdf")
	if get(m, "Basic-Auth") != "" || len(m.BasicAuth) != 2 {
		t.Fatalf("basic auth: %+v", m)
	}
	for _, tc := range []struct {
		u, p string
		ok   bool
	}{{"alice", "s3cret", true}, {"bob", "hunter2", true}, {"alice", "hunter2", false}, {"alice", "", false}, {"", "", false}, {"ALICE", "s3cret", false}} {
		if m.Authorized(tc.u, tc.p) != tc.ok {
			t.Errorf("Authorized(%q, %q) = %v", tc.u, tc.p, !tc.ok)
		}
	}
	if !h.Match("/public").Authorized("", "") {
		t.Error("a path without Basic-Auth was not authorized")
	}
	var nilH *Headers
	if m := nilH.Match("/x"); m.Headers != nil || !m.Authorized("a", "b") {
		t.Error("nil Headers matched")
	}
	// "/*" matches every path: a set without it shows the miss.
	h2 := CompileHeaders(rs[1:])
	if a := testing.AllocsPerRun(100, func() { h2.Match("/nope/none.txt") }); a != 0 {
		t.Errorf("a miss allocates %v times", a)
	}
}
