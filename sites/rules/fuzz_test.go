package rules

import (
	"reflect"
	"strings"
	"testing"
)

// seeds are lines from the fixtures and the tests, for the fuzzers.
var seeds = []string{
	"/home /\n/news/* /blog/:splat\n",
	"/store id=:id /blog/:id 301!\n# c\n/a/:b/* /c/:b/:splat?x=:b#f 200\n",
	"/api/* https://api.example.com/:splat 200!\nhttps://a.example/* /b\n/ /c 302 Country=us\n",
	"/*\n  X-Frame-Options: DENY\n/assets/*\n  Cache-Control: a ,b\n  Basic-Auth: u:p v:q\n",
	"/*.js\n  X-A: 1\n/blog/:slug\n  X-B: 2\n/:x/*/y*z\n  X-C: 3\n",
}

// FuzzParseRedirects checks that parsing never panics, is deterministic,
// and that every rule it returns compiles and carries a line number.
func FuzzParseRedirects(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rs, ws := ParseRedirects(data)
		rs2, ws2 := ParseRedirects(data)
		if !reflect.DeepEqual(rs, rs2) || !reflect.DeepEqual(ws, ws2) {
			t.Fatal("not deterministic")
		}
		for _, r := range rs {
			if r.Line < 1 || checkRedirect(&r) != "" {
				t.Fatalf("rule %+v does not check", r)
			}
		}
		if got := CompileRedirects(rs).Len(); got != len(rs) {
			t.Fatalf("compiled %d of %d rules", got, len(rs))
		}
	})
}

// FuzzParseHeaders checks that parsing never panics, is deterministic,
// and that what it returns compiles and matches without panicking.
func FuzzParseHeaders(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rs, ws := ParseHeaders(data)
		rs2, ws2 := ParseHeaders(data)
		if !reflect.DeepEqual(rs, rs2) || !reflect.DeepEqual(ws, ws2) {
			t.Fatal("not deterministic")
		}
		h := CompileHeaders(rs)
		for _, r := range rs {
			h.Match(r.Pattern)
		}
	})
}

// FuzzMatch checks that matching random paths and queries against random
// rule files never panics, and that a match names a status it may have.
func FuzzMatch(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s), "/news/a/b", "id=1&x", false)
		f.Add([]byte(s), "/a/b/c/", "id=%zz", true)
	}
	f.Fuzz(func(t *testing.T, data []byte, path, query string, exists bool) {
		rs, _ := ParseRedirects(data)
		r := CompileRedirects(rs)
		m, ok := r.Match(path, query, exists)
		if ok && (!supportedStatus(m.Status) || m.To == "" || m.Line < 1) {
			t.Fatalf("match %+v", m)
		}
		hs, _ := ParseHeaders(data)
		CompileHeaders(hs).Match(path).Authorized(path, query)
	})
}

// FuzzCompileRules feeds the compilers rules that did not come from the
// parsers (any From, To, status, query condition, header pattern, name
// and value), as a caller may build them: compiling and matching never
// panic, CompileRedirects keeps exactly the rules that check, a match
// names a kept rule with a status it may have, and no header a site may
// not set (or an invalid one) is ever matched.
func FuzzCompileRules(f *testing.F) {
	f.Add("/a/:x/*", "/b/:x/:splat?q=:q#f", "q", ":q", 301, false, "/a/*", "X-A", "1", "/a/1/2/3", "q=%41")
	f.Add("/:l/docs/*", "https://example.com/:l", "id", "7", 302, true, "/*.js", "Clear-Site-Data", `"*"`, "/en/docs/x", "id=7")
	f.Add("/*", "/index.html", "", "", 200, false, "/:x/*/y*z", "Basic-Auth", "u:p", "/x/q/yaz", "")
	f.Add("/go", "//evil", "a", "", 404, true, "/", "X-Accel-Redirect", "/in", "/go/", "a")
	f.Fuzz(func(t *testing.T, from, to, qName, qValue string, status int, force bool, pattern, name, value, path, query string) {
		rs := []Redirect{
			{From: from, To: to, Status: status, Force: force, Line: 1},
			{From: from, To: to, Status: status, Query: []QueryMatch{{qName, qValue}}, Line: 2},
			{From: strings.TrimSuffix(from, "/") + "/*", To: to, Status: DefaultStatus, Line: 3},
		}
		kept := map[int]bool{}
		for i := range rs {
			if checkRedirect(&rs[i]) == "" {
				kept[rs[i].Line] = true
			}
		}
		r := CompileRedirects(rs)
		if r.Len() != len(kept) {
			t.Fatalf("compiled %d rules, %d check", r.Len(), len(kept))
		}
		for _, exists := range []bool{false, true} {
			m, ok := r.Match(path, query, exists)
			if ok && (!kept[m.Line] || !supportedStatus(m.Status) || m.To == "" ||
				m.Path != "" && m.Status != 200 && m.Status != 404 && m.Status != 410) {
				t.Fatalf("match %+v of rules %+v", m, rs)
			}
		}
		h := CompileHeaders([]HeaderRule{
			{Pattern: pattern, Headers: []Header{{name, value}, {"X-Kept", "1"}}, Line: 1},
			{Pattern: "/*", Headers: []Header{{name, value}}, Line: 2},
		})
		m := h.Match(path)
		if len(m.Headers) > MaxHeadersPerAnswer {
			t.Fatalf("%d headers", len(m.Headers))
		}
		for _, hd := range m.Headers {
			if _, reserved := reservedHeader(hd.Name); reserved || !validHeaderName(hd.Name) ||
				strings.EqualFold(hd.Name, BasicAuthHeader) || strings.ContainsAny(hd.Value, "\x00\r\n") {
				t.Fatalf("matched header %q: %q", hd.Name, hd.Value)
			}
		}
		m.Authorized(name, value)
	})
}
