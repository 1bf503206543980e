package rules

import (
	"reflect"
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
