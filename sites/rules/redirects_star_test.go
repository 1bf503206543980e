package rules

import "testing"

// TestRedirectsStarBeforeMorePath: Netlify's engine takes "*" for a
// splat only as the end of the path ("/news/*"); a "*" with more path
// after it, a whole segment ("/mid/*/end") or inside one
// ("/k/kubectl_*.md"), is a literal character. Such a rule applies, to
// the path spelled with that "*" only, and ":splat" in its target has no
// value, so it stays as written. Netlify support's guide ("A splat can
// only be used at the end of a URL", answers.netlify.com/t/13433) and
// kubernetes/website#28917 (Netlify redirected /…/kubectl_*.md, literally,
// to …#:splat, literally, and kubectl_get.md not at all) say so; the
// matcher itself (netlify/libredirect) is not public.
func TestRedirectsStarBeforeMorePath(t *testing.T) {
	r := compile(t, `
/mid/*/end            /m/:splat        302
/k/kubectl_*.md       /cmds#:splat     301
/p/:x/*/y             /q/:x/:splat     302
/*/lead               /l/:splat        302
/tail/*               /t/:splat        302
/two/*/*              /2/:splat        302
`)
	cases := []struct {
		path, query string
		want        Match
		miss        bool
	}{
		// a "*" before more path matches no text: not one segment, not several, not none
		{path: "/mid/a/end", miss: true},
		{path: "/mid/a/b/end", miss: true},
		{path: "/mid/end", miss: true},
		{path: "/mid//end", miss: true},
		// it matches itself; :splat is unbound and stays as written
		{path: "/mid/*/end", want: Match{Status: 302, To: "/m/:splat", Line: 2}},
		{path: "/mid/*/end/", want: Match{Status: 302, To: "/m/:splat", Line: 2}},
		{path: "/mid/*/end", query: "a=1&b", want: Match{Status: 302, To: "/m/:splat?a=1&b", Line: 2}},
		{path: "/k/kubectl_get.md", miss: true},
		{path: "/k/kubectl_*.md", want: Match{Status: 301, To: "/cmds#:splat", Line: 3}},
		// with placeholders around it: the placeholders bind, the "*" is literal
		{path: "/p/1/*/y", want: Match{Status: 302, To: "/q/1/:splat", Line: 4}},
		{path: "/p/1/z/y", miss: true},
		{path: "/*/lead", want: Match{Status: 302, To: "/l/:splat", Line: 5}},
		{path: "/a/lead", miss: true},
		// the final "/*" is still a splat
		{path: "/tail/a/b", want: Match{Status: 302, To: "/t/a/b", Line: 6}},
		{path: "/two/*/a/b", want: Match{Status: 302, To: "/2/a/b", Line: 7}},
		{path: "/two/*", want: Match{Status: 302, To: "/2/", Line: 7}},
		{path: "/two/a/b", miss: true},
	}
	for _, tc := range cases {
		got, ok := r.Match(tc.path, tc.query, false)
		if tc.miss {
			if ok {
				t.Errorf("%s?%s: matched %+v, want no match", tc.path, tc.query, got)
			}
			continue
		}
		if !ok || got != tc.want {
			t.Errorf("%s?%s: got %+v %v, want %+v", tc.path, tc.query, got, ok, tc.want)
		}
	}
}
