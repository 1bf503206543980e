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

// FuzzHeaderPattern checks matchHeaderPattern, which backtracks, against
// headerPatternRegexp (Go's linear regular expressions): they agree on
// every pattern and path. The inputs are spelled in the few pieces a
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

// BenchmarkHeadersStarInTheMiddle measures a "*" part in the middle of
// a pattern whose text after it occurs at every other byte of the path
// but never matches to the end: "/*/a/:x/a/:x/…/b" (2 KiB) on /a/a/a/…,
// the worst case of going back to a "*" once per "/" of the path. With
// one "*" the text after it is matched once, from the end: the time per
// byte of path stays the same from 1 KiB to 4 KiB (paths are at most
// 4 KiB when served). With a second "*" after that text ("…/b/*"), the
// first one still comes back once per "/", each time comparing up to the
// text's length: len(path) × len(text) at worst.
func BenchmarkHeadersStarInTheMiddle(b *testing.B) {
	text := strings.Repeat("a/:x/", 400) + "b"
	for _, tc := range []struct{ name, pattern string }{
		{"one-star", "/*/" + text},
		{"two-stars", "/*/" + text + "/*"},
	} {
		h := CompileHeaders([]HeaderRule{{Pattern: tc.pattern, Headers: []Header{{"X-A", "1"}}}})
		for _, n := range []int{1 << 10, 4 << 10} {
			path := strings.Repeat("/a", n/2)
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
