package rules

import (
	"regexp"
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
	sb.WriteByte('^')
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
