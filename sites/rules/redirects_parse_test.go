package rules

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// readFixture reads testdata/netlify/<kind>/<name>.
func readFixture(t *testing.T, kind, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "netlify", kind, name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestParseRedirectsNetlifyFixtures parses netlify/build's redirect-parser
// fixtures and compares with that repository's expected outputs
// (tests/line-parser.test.ts); where sitedrop differs (proxies, conditions,
// host rules), the line is a Warning with the reason given.
func TestParseRedirectsNetlifyFixtures(t *testing.T) {
	r := func(from, to string, status int, force bool, line int, q ...QueryMatch) Redirect {
		return Redirect{From: from, To: to, Status: status, Force: force, Line: line, Query: q}
	}
	cases := []struct {
		name   string
		want   []Redirect
		reason string // the Warning expected on every other line
	}{
		{"empty_line", []Redirect{r("/blog/my-post.php", "/blog/my-post", 301, false, 1), r("/blog/my-post-two.php", "/blog/my-post-two", 301, false, 3)}, ""},
		{"multiple_lines", []Redirect{r("/10thmagnitude", "http://www.10thmagnitude.com/", 301, false, 1), r("/bananastand", "http://eepurl.com/Lgde5", 301, false, 2)}, ""},
		{"line_trim", []Redirect{r("/home", "/", 301, false, 1)}, ""},
		{"comment_full", []Redirect{r("/blog/my-post.php", "/blog/my-post", 301, false, 2)}, ""},
		{"comment_inline", []Redirect{r("/blog/my-post.php", "/blog/my-post", 301, false, 1)}, ""},
		{"from_simple", []Redirect{r("/home", "/", 301, false, 1)}, ""},
		{"query", []Redirect{
			r("/", "/news", 301, false, 1, QueryMatch{"page", "news"}),
			r("/blog", "/blog/:post_id", 301, false, 2, QueryMatch{"post", ":post_id"}),
			r("/", "/about", 301, false, 3, QueryMatch{"_escaped_fragment_", "/about"}),
		}, ""},
		{"to_anchor", []Redirect{r("/blog/my-post-ads.php", "/blog/my-post#ads", 301, false, 1)}, ""},
		{"to_splat_no_force", []Redirect{r("/*", "https://www.bitballoon.com/:splat", 301, false, 1)}, ""},
		{"to_splat_force", []Redirect{r("/*", "https://www.bitballoon.com/:splat", 301, true, 1)}, ""},
		{"to_path_forward", []Redirect{r("/admin/*", "/admin/:splat", 200, false, 1), r("/admin/*", "/admin/:splat", 200, true, 2)}, ""},
		{"status", []Redirect{r("/test", "https://www.bitballoon.com/test=hello", 301, false, 1)}, ""},
		{"status_force", []Redirect{r("/test", "https://www.bitballoon.com/test=hello", 301, true, 1)}, ""},
		// Netlify parses these; sitedrop does not apply them.
		{"from_absolute_uri", nil, "host rules wait for custom domains"},
		{"proxy", nil, "proxying to another origin is not supported"},
		{"signed", nil, "signed proxy rules (Sign=) are not supported"},
		{"conditions_country", nil, "Country= conditions"},
		{"conditions_country_language", nil, "Country= conditions"},
		{"conditions_role", nil, "Role= conditions"},
		{"conditions_query", nil, "Country= conditions"},
		// Netlify's syntax errors.
		{"invalid_url", nil, "host rules wait for custom domains"},
		{"invalid_status", nil, `invalid status code "not_a_status"`},
		{"invalid_no_to_no_status", nil, "missing destination path or URL"},
		{"invalid_no_to_status", nil, "missing destination"},
		{"invalid_no_to_query", nil, "the destination must start with"},
		{"invalid_no_slash", nil, "the destination must start with"},
		{"invalid_mistaken_headers", nil, "destination"},
		{"invalid_dot_netlify_url", nil, "host rules wait for custom domains"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data := readFixture(t, "redirects", tc.name)
			got, warns := ParseRedirects(data)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("rules:\n got %+v\nwant %+v", got, tc.want)
			}
			if tc.reason == "" && len(warns) > 0 {
				t.Errorf("unexpected warnings %+v", warns)
			}
			if tc.reason != "" {
				if len(warns) == 0 {
					t.Fatalf("no warning, want %q", tc.reason)
				}
				for _, w := range warns {
					if w.File != RedirectsFile || w.Line == 0 || w.Text == "" || !strings.Contains(w.Reason, tc.reason) {
						t.Errorf("warning %+v, want reason %q", w, tc.reason)
					}
				}
			}
		})
	}
}

// TestParseRedirectsLines covers the line syntax beyond the fixtures:
// statuses, force, forward rules, conditions and malformed parts.
func TestParseRedirectsLines(t *testing.T) {
	cases := []struct {
		line   string
		want   Redirect // Line 1 implied
		reason string
	}{
		{line: "/a /b", want: Redirect{From: "/a", To: "/b", Status: 301}},
		{line: "/a /b 302", want: Redirect{From: "/a", To: "/b", Status: 302}},
		{line: "/a /b 303", want: Redirect{From: "/a", To: "/b", Status: 303}},
		{line: "/a /b 307", want: Redirect{From: "/a", To: "/b", Status: 307}},
		{line: "/a /b 308!", want: Redirect{From: "/a", To: "/b", Status: 308, Force: true}},
		{line: "/a /b 200", want: Redirect{From: "/a", To: "/b", Status: 200}},
		{line: "/a/* /404.html 404", want: Redirect{From: "/a/*", To: "/404.html", Status: 404}},
		{line: "/gone /gone.html 410", want: Redirect{From: "/gone", To: "/gone.html", Status: 410}},
		{line: "/a https://example.com/b 302", want: Redirect{From: "/a", To: "https://example.com/b", Status: 302}},
		{line: "/news/:year/:month /blog-:year-:month.html", want: Redirect{From: "/news/:year/:month", To: "/blog-:year-:month.html", Status: 301}},
		{line: "/store id=:id tag=x /blog/:id 301", want: Redirect{From: "/store", Query: []QueryMatch{{"id", ":id"}, {"tag", "x"}}, To: "/blog/:id", Status: 301}},
		{line: "/a /b 301 # moved", want: Redirect{From: "/a", To: "/b", Status: 301}},
		{line: "/a /b 500", reason: "status 500 is not supported"},
		{line: "/a /b 200x", reason: `invalid status code "200x"`},
		{line: "/a /b 301 extra", reason: `unexpected "extra" after the status`},
		{line: "/a /b 301 Foo=bar", reason: `unknown condition "Foo=bar"`},
		{line: "/a /b 302 Language=en", reason: "Language= conditions"},
		{line: "/a /b 302 Cookie=nf_ab", reason: "Cookie= conditions"},
		{line: "/api/* https://api.example.com/:splat 200!", reason: "proxying to another origin is not supported"},
		{line: "/a https://x.example/404 404", reason: "a 404 rule must name a page of this site"},
		{line: "https://a.example/* https://b.example/:splat 301!", reason: "host rules wait for custom domains"},
		{line: "/a 301", reason: "missing destination"},
		{line: "/a/* 301", reason: "missing destination"},
		// a "*" with more path after it is a literal character, as in Netlify's engine
		{line: "/a*b /c", want: Redirect{From: "/a*b", To: "/c", Status: 301}},
		{line: "/*/x /c", want: Redirect{From: "/*/x", To: "/c", Status: 301}},
		{line: "/a* /c", reason: `a splat "*" ending the path must be a whole segment`},
		{line: "/a/b*/ /c", reason: `a splat "*" ending the path must be a whole segment`},
		{line: "/a/:b-c /c", reason: "invalid placeholder"},
		{line: "/a noequals /b", reason: `query condition "noequals" must be name=value`},
		{line: "/a //evil.example", reason: "must be a path of this site"},
		{line: "/a https:///x 302", reason: "no valid host"},
		{line: "a /b", reason: `the path must start with "/"`},
	}
	for _, tc := range cases {
		got, warns := ParseRedirects([]byte(tc.line + "\n"))
		if tc.reason != "" {
			if len(got) != 0 || len(warns) != 1 || !strings.Contains(warns[0].Reason, tc.reason) {
				t.Errorf("%q: got %+v %+v, want warning %q", tc.line, got, warns, tc.reason)
			}
			continue
		}
		tc.want.Line = 1
		if len(warns) != 0 || len(got) != 1 || !reflect.DeepEqual(got[0], tc.want) {
			t.Errorf("%q: got %+v %+v, want %+v", tc.line, got, warns, tc.want)
		}
	}
}

// TestParseRedirectsLimits checks the caps: long lines, rule count,
// warnings count, and the cut of a warning's text.
func TestParseRedirectsLimits(t *testing.T) {
	long := "/a /" + strings.Repeat("b", MaxLineBytes)
	got, warns := ParseRedirects([]byte("/x /y\r\n" + long + "\n/z /w\n"))
	if len(got) != 2 || got[1].Line != 3 || len(warns) != 1 || warns[0].Line != 2 {
		t.Fatalf("long line: %+v %+v", got, warns)
	}
	if len(warns[0].Text) > maxWarningText+len("…") {
		t.Errorf("warning text not cut: %d bytes", len(warns[0].Text))
	}

	var sb strings.Builder
	for range MaxRedirectRules + 5 {
		sb.WriteString("/a /b\n")
	}
	got, warns = ParseRedirects([]byte(sb.String()))
	if len(got) != MaxRedirectRules || len(warns) != 1 || warns[0].Line != MaxRedirectRules+1 {
		t.Fatalf("rule cap: %d rules, %+v", len(got), warns)
	}
	got, warns = ParseRedirectsN([]byte("# c\n/a /b\nbad\n/c /d\n/e /f\n/g /h\n"), 2)
	if len(got) != 2 || got[1].From != "/c" || len(warns) != 2 || warns[1].Line != 5 || !strings.Contains(warns[1].Reason, "more than 2 rules") {
		t.Fatalf("a caller's cap: %+v %+v", got, warns)
	}

	sb.Reset()
	for range 500 {
		sb.WriteString("bad\n")
	}
	_, warns = ParseRedirects([]byte(sb.String()))
	if len(warns) != MaxWarnings || !strings.Contains(warns[MaxWarnings-1].Reason, "401 more lines") {
		t.Fatalf("warning cap: %d, last %+v", len(warns), warns[len(warns)-1])
	}
}

// TestRedirectTargetPlaceholders: a destination may use :placeholders
// up to MaxTargetPlaceholders times; past that the rule is refused,
// since each stands for up to a whole request path (":splat" 670 times
// in one 4 KiB line would expand a 4 KiB path to 8 MB).
func TestRedirectTargetPlaceholders(t *testing.T) {
	ok := "/a/* /b/" + strings.Repeat(":splat/", MaxTargetPlaceholders) + " 301"
	if rs, warns := ParseRedirects([]byte(ok)); len(rs) != 1 || len(warns) != 0 {
		t.Errorf("%d placeholders: %+v %+v", MaxTargetPlaceholders, rs, warns)
	}
	for _, line := range []string{
		"/a/* /b/" + strings.Repeat(":splat", MaxTargetPlaceholders+1) + " 301",
		"/a/* https://x.example/" + strings.Repeat(":splat", 670) + " 301",
	} {
		rs, warns := ParseRedirects([]byte(line))
		if len(rs) != 0 || len(warns) != 1 || !strings.Contains(warns[0].Reason, "more than 16 times") {
			t.Errorf("%.40s…: %+v %+v, want it refused", line, rs, warns)
		}
		if r := CompileRedirects([]Redirect{{From: "/a/*", To: line[5 : len(line)-4], Status: 301}}); r.Len() != 0 {
			t.Errorf("%.40s… compiles", line)
		}
	}
}
