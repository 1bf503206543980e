package rules

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// headerPatternRegexp is the meaning of a _headers path written as a
// regular expression (Go's, which runs in linear time), to check
// matchHeaderPattern against: parts split on "/" and trimmed at their
// end, empty ones dropped; ":name" is one segment; a "*" part is zero or
// more whole segments ("(/.*)?"), first, last or in the middle; a "*"
// inside a part is any text. The path is lower-cased, its trailing slash
// dropped, as Headers.Match does.
func headerPatternRegexp(pattern string) *regexp.Regexp {
	var sb strings.Builder
	sb.WriteString("(?s)^")
	parts := 0
	for part := range strings.SplitSeq(pattern, "/") {
		if part = strings.TrimRight(part, " \t"); part == "" {
			continue
		}
		parts++
		switch {
		case part == "*":
			sb.WriteString("(?:/.*)?")
		case part[0] == ':':
			sb.WriteString("/[^/]+")
		default:
			sb.WriteByte('/')
			for k, piece := range strings.Split(part, "*") {
				if k > 0 {
					sb.WriteString(".*")
				}
				sb.WriteString(regexp.QuoteMeta(strings.ToLower(piece)))
			}
		}
	}
	if parts == 0 {
		sb.WriteByte('/')
	}
	sb.WriteByte('$')
	return regexp.MustCompile(sb.String())
}

// matchPathRegexp is Headers.Match's path normalization, then re.
func matchPathRegexp(re *regexp.Regexp, path string) bool {
	p := strings.ToLower(path)
	if len(p) > 1 && p[len(p)-1] == '/' {
		p = p[:len(p)-1]
	}
	return re.MatchString(p)
}

// TestHeadersStarInTheMiddle: a "*" part in the middle of a _headers
// path stands for zero or more whole segments, as Netlify applies it:
// "/a/*/b" matches /a/b, /a/x/b and /a/x/y/b. Netlify's production
// server applied "/*/payload.json" to /payload.json (netlify/cli#1041);
// netlify/build's headers-parser (packages/headers-parser/src/for_regexp.ts,
// used by netlify dev: "/a/?(.*)/b/?" for "/a/*/b") and the CLI's
// earlier matcher ("Our production logic uses regex too", netlify/cli
// src/utils/headers.js: "/a(?:|/|/(.*)/?)/b/?") agree, and
// netlify/primitives' headersForPath.test.ts has "/directory/*/test.html"
// and "/*/_next/static/chunks/*". Segments stay whole, as for a final
// "/*" ("/assets/*" does not match /assetsx): "/a/*/b" does not match
// /ax/b, where for_regexp.ts's looser regex would.
func TestHeadersStarInTheMiddle(t *testing.T) {
	cases := []struct {
		pattern string
		match   []string
		miss    []string
	}{
		{"/a/*/b",
			[]string{"/a/b", "/a/b/", "/a/x/b", "/a/x/y/b", "/A/X/B", "/a/b/b", "/a/*/b"},
			[]string{"/a", "/b", "/a/xb", "/ax/b", "/a/x/b/c", "/a/x/bb", "/xa/x/b", "/"}},
		{"/*/payload.json",
			[]string{"/payload.json", "/x/payload.json", "/x/y/payload.json"},
			[]string{"/", "/xpayload.json", "/payload.json/x", "/x/payload.jsonx"}},
		{"/*/_next/static/chunks/*",
			[]string{"/placeholder/_next/static/chunks/placeholder", "/_next/static/chunks", "/a/b/_next/static/chunks/c/d"},
			[]string{"/_next/static/chunksx", "/x_next/static/chunks/a"}},
		{"/directory/*/test.html",
			[]string{"/directory/placeholder/test.html", "/directory/test.html"},
			[]string{"/directory/placeholder/test.htm", "/directorytest.html"}},
		{"/a/*/*/b", []string{"/a/b", "/a/x/b", "/a/x/y/z/b"}, []string{"/a/xb", "/ab"}},
		{"/a/*/:id/b", []string{"/a/1/b", "/a/x/1/b", "/a/x/y/1/b"}, []string{"/a/b", "/a//b"}},
		{"/a/*/b*c/d", []string{"/a/bc/d", "/a/x/bxc/d", "/a/x/b/y/c/d"}, []string{"/a/xbc/d"}},
	}
	for _, tc := range cases {
		h := CompileHeaders([]HeaderRule{{Pattern: tc.pattern, Headers: []Header{{"X-Hit", "1"}}}})
		re := headerPatternRegexp(tc.pattern)
		for _, p := range tc.match {
			if len(h.Match(p).Headers) != 1 {
				t.Errorf("%s does not match %s", tc.pattern, p)
			}
			if !matchPathRegexp(re, p) {
				t.Errorf("reference %s does not match %s", re, p)
			}
		}
		for _, p := range tc.miss {
			if len(h.Match(p).Headers) != 0 {
				t.Errorf("%s matches %s", tc.pattern, p)
			}
			if matchPathRegexp(re, p) {
				t.Errorf("reference %s matches %s", re, p)
			}
		}
	}
}

// FuzzHeaderPattern checks matchHeaderPattern, which takes the first
// place each literal between two "*" occurs, against headerPatternRegexp
// (Go's regular expressions, which try every place): they agree on every
// pattern and path, and checkHeaderPattern and compileHeaderPattern
// refuse the same patterns. The inputs are spelled in the few pieces a
// pattern's meaning depends on ("/", "*", ":x", letters in both cases, a
// space and a dot), one piece a byte, so that the fuzzer spends its time
// on the matcher, not on inputs that are not paths.
func FuzzHeaderPattern(f *testing.F) {
	for _, s := range []struct{ pattern, path string }{
		{"/a/*/b", "/a/b"}, {"/a/*/b", "/a/a/bb/b"}, {"/a/*/b", "/ab/b"},
		{"/*/b.a", "/b.a"}, {"/*/a/b/*", "/a/b"}, {"/a/*/:x/b*a/*", "/a/b/a/bba"},
		{"/*.a", "/b/a.A"}, {"/", "/"}, {"/*", "/"}, {"/*a*/*/b", "/bab/b"}, {"/a/*/*/b ", "/a/b/"},
	} {
		f.Add(spellPath(s.pattern), spellPath(s.path))
	}
	f.Fuzz(func(t *testing.T, patternBytes, pathBytes []byte) {
		pattern, path := "/"+readPath(patternBytes), "/"+readPath(pathBytes)
		if checkHeaderPattern(pattern, false) != "" {
			if _, reason := compileHeaderPattern(pattern); reason == "" {
				t.Fatalf("%q compiles but does not check", pattern)
			}
			return
		}
		toks, reason := compileHeaderPattern(pattern)
		if reason != "" {
			t.Fatalf("%q checks but does not compile: %s", pattern, reason)
		}
		p := strings.ToLower(path)
		if len(p) > 1 && p[len(p)-1] == '/' {
			p = p[:len(p)-1]
		}
		re := headerPatternRegexp(pattern)
		if got, want := matchHeaderPattern(toks, p), re.MatchString(p); got != want {
			t.Fatalf("%q on %q: matched %v, %s says %v", pattern, path, got, re, want)
		}
	})
}

// pathPieces are what FuzzHeaderPattern spells its patterns and paths with.
var pathPieces = []string{"/", "*", ":x", "a", "b", "A", " ", "."}

// readPath spells data with pathPieces, one byte a piece, at most 64.
func readPath(data []byte) string {
	var sb strings.Builder
	for _, c := range data[:min(len(data), 64)] {
		sb.WriteString(pathPieces[int(c)%len(pathPieces)])
	}
	return sb.String()
}

// spellPath is the bytes readPath reads as s (without its leading "/").
func spellPath(s string) []byte {
	var data []byte
	for s = s[1:]; s != ""; {
		k := slices.IndexFunc(pathPieces, func(piece string) bool { return strings.HasPrefix(s, piece) })
		if k < 0 {
			panic("spellPath: " + s + " has no piece")
		}
		data = append(data, byte(k))
		s = s[len(pathPieces[k]):]
	}
	return data
}

// TestHeadersPlaceholderBetweenStars: a ":name" between two "*" is not
// applied (a Warning), since it would make the text between them a
// search with a wildcard; before the first "*" or after the last one it
// applies as before.
func TestHeadersPlaceholderBetweenStars(t *testing.T) {
	for _, pattern := range []string{"/*/:lang/*", "/a*/:x/b*", "/*/x/:id/y/*/z", "/*.a/:x/*"} {
		rules, warns := ParseHeaders([]byte(pattern + "\n  X-A: 1\n"))
		if len(rules) != 0 || len(warns) == 0 || !strings.Contains(warns[0].Reason, `placeholder between two "*"`) || warns[0].Line != 1 {
			t.Errorf("%s: %+v %+v, want it refused", pattern, rules, warns)
		}
		if h := CompileHeaders([]HeaderRule{{Pattern: pattern, Headers: []Header{{"X-A", "1"}}}}); len(h.rules) != 0 {
			t.Errorf("%s compiles", pattern)
		}
	}
	for _, tc := range []struct{ pattern, path string }{
		{"/:lang/*", "/en/x/y"}, {"/*/:lang", "/x/y/en"}, {"/:a/*/b/*/c/:d", "/1/2/b/y/c/3"}, {"/*/:a/:b", "/1/2"},
	} {
		rules, warns := ParseHeaders([]byte(tc.pattern + "\n  X-A: 1\n"))
		if len(rules) != 1 || len(warns) != 0 || len(CompileHeaders(rules).Match(tc.path).Headers) != 1 {
			t.Errorf("%s on %s: %+v %+v, want it applied", tc.pattern, tc.path, rules, warns)
		}
	}
}

// TestHeadersManyStars: patterns with several "*" of both kinds, where
// the first place a literal occurs is not followed by the "/" a "*" part
// needs, or a later "*" must take text an earlier one could have.
func TestHeadersManyStars(t *testing.T) {
	cases := []struct {
		pattern string
		match   []string
		miss    []string
	}{
		{"/*a/*/b", []string{"/xa_a/b", "/a/b", "/xa/y/b"}, []string{"/xa_b", "/a_a_b", "/ab"}},
		{"/*a/*", []string{"/xa", "/a_a", "/xa_a/y", "/ba/"}, []string{"/a_", "/xab"}},
		{"/*a*b/*/c*", []string{"/ab/c", "/a/b/c", "/xaxb/y/cz", "/ab_ab/c"}, []string{"/abc", "/ab_c", "/bab_/c"}},
		{"/*/x/*/x/*", []string{"/x/x", "/a/x/b/x/c", "/x/x/x"}, []string{"/x", "/xx/x", "/x/xx"}},
		{"/a*a*a*a", []string{"/aaaa", "/a/a/a/a", "/abababa"}, []string{"/aaa", "/aab"}},
	}
	for _, tc := range cases {
		h := CompileHeaders([]HeaderRule{{Pattern: tc.pattern, Headers: []Header{{"X-Hit", "1"}}}})
		re := headerPatternRegexp(tc.pattern)
		for _, p := range tc.match {
			if len(h.Match(p).Headers) != 1 || !matchPathRegexp(re, p) {
				t.Errorf("%s does not match %s (reference %v)", tc.pattern, p, matchPathRegexp(re, p))
			}
		}
		for _, p := range tc.miss {
			if len(h.Match(p).Headers) != 0 || matchPathRegexp(re, p) {
				t.Errorf("%s matches %s (reference %v)", tc.pattern, p, matchPathRegexp(re, p))
			}
		}
	}
}

// BenchmarkHeadersStarInTheMiddle measures the worst cases of patterns
// with one, two and three "*" on paths of 1, 4 and 16 KiB (paths are at
// most 4 KiB when served). one-star: "/*/a/:x/a/:x/…/b" (2 KiB) on
// /a/a/a/…, whose text after the "*" occurs at every other byte but
// never to the end. two-stars, three-stars: "/*" A "/*/b" and "/*" A "*"
// A "/*/b", A 512 "a", on "/aaa…": A occurs at every byte, never
// followed by the "/" the "*" part needs; a matcher that comes back to a
// "*" compares A again at each byte (len(path) × len(A)). Each literal
// found once where it first occurs, the time per byte of path stays the
// same from 1 to 16 KiB.
func BenchmarkHeadersStarInTheMiddle(b *testing.B) {
	text := strings.Repeat("a/:x/", 400) + "b"
	a := strings.Repeat("a", 512)
	for _, tc := range []struct{ name, pattern, unit string }{
		{"one-star", "/*/" + text, "/a"},
		{"two-stars", "/*" + a + "/*/b", "a"},
		{"three-stars", "/*" + a + "*" + a + "/*/b", "a"},
	} {
		h := CompileHeaders([]HeaderRule{{Pattern: tc.pattern, Headers: []Header{{"X-A", "1"}}}})
		if len(h.rules) != 1 {
			b.Fatalf("%s is not applied", tc.pattern)
		}
		for _, n := range []int{1 << 10, 4 << 10, 16 << 10} {
			path := "/" + strings.Repeat(tc.unit, n/len(tc.unit))
			b.Run(tc.name+"/"+strconv.Itoa(n), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(n))
				for b.Loop() {
					if len(h.Match(path).Headers) != 0 {
						b.Fatal("matched")
					}
				}
			})
		}
	}
}
