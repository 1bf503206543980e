package rules

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// compile parses a _redirects text, failing on any warning.
func compile(t *testing.T, text string) *Redirects {
	t.Helper()
	rs, warns := ParseRedirects([]byte(text))
	if len(warns) > 0 {
		t.Fatalf("warnings: %+v", warns)
	}
	return CompileRedirects(rs)
}

// TestRedirectsMatch covers Netlify's documented matching rules
// ("Redirects and rewrites", "Redirect options"): statuses, splats,
// placeholders, query conditions and pass-through, first match wins,
// trailing slash, case, shadowing and force.
func TestRedirectsMatch(t *testing.T) {
	const file = `
# Netlify's documented examples
/home              /
/blog/my-post.php  /blog/my-post
/news              /blog
/cuties            https://www.petsofnetlify.com
/my-redirect       /          302
/pass-through      /index.html 200
/special-offer     /too-late-its-over 404
/gone              /gone.html 410
/see-other         /other     303
/temp              /t         307
/perm              /p         308
/news/*            /blog/:splat
/n/:year/:month/:date/:slug  /blog/:year/:month/:date/:slug
/articles id=:id tag=:tag  /posts/:tag/:id  301
/store  id=:id  /blog/:id  301
/lit    page=news  /news-page
/target q=:q  /search?term=:q&src=redirect
/anchor  /page#section
/Case    /upper
/app/*   /app/index.html  200
/forced  /elsewhere  301!
/forced-rw/*  /index.html  200!
/first   /one
/first   /two
/:lang/docs/*  /docs/:lang/:splat
/abs/*   https://example.com/x/:splat?from=sitedrop 302
/sp/*    /s/:splat
`
	r := compile(t, file)
	cases := []struct {
		path, query string
		exists      bool
		want        Match
		miss        bool
	}{
		{path: "/home", want: Match{Status: 301, To: "/", Line: 3}},
		{path: "/home/", want: Match{Status: 301, To: "/", Line: 3}},
		{path: "/blog/my-post.php", want: Match{Status: 301, To: "/blog/my-post", Line: 4}},
		{path: "/cuties", want: Match{Status: 301, To: "https://www.petsofnetlify.com", Line: 6}},
		{path: "/my-redirect", want: Match{Status: 302, To: "/", Line: 7}},
		{path: "/pass-through", want: Match{Status: 200, To: "/index.html", Rewrite: true, Path: "/index.html", Line: 8}},
		{path: "/special-offer", want: Match{Status: 404, To: "/too-late-its-over", Path: "/too-late-its-over", Line: 9}},
		{path: "/gone", want: Match{Status: 410, To: "/gone.html", Path: "/gone.html", Line: 10}},
		{path: "/see-other", want: Match{Status: 303, To: "/other", Line: 11}},
		{path: "/temp", want: Match{Status: 307, To: "/t", Line: 12}},
		{path: "/perm", want: Match{Status: 308, To: "/p", Line: 13}},
		// splats: the literal /news (line 5) comes first; deeper paths take the splat
		{path: "/news", want: Match{Status: 301, To: "/blog", Line: 5}},
		{path: "/news/2004/01/10/my-story", want: Match{Status: 301, To: "/blog/2004/01/10/my-story", Line: 14}},
		{path: "/news/", want: Match{Status: 301, To: "/blog", Line: 5}},
		{path: "/newsroom", miss: true},
		// placeholders: one segment each
		{path: "/n/2024/02/03/hello", want: Match{Status: 301, To: "/blog/2024/02/03/hello", Line: 15}},
		{path: "/n/2024/02/03", miss: true},
		{path: "/n/2024/02/03/hello/more", miss: true},
		// query conditions: all present, any order, extra parameters allowed
		{path: "/articles", query: "tag=go&id=7&x=1", want: Match{Status: 301, To: "/posts/go/7?tag=go&id=7&x=1", Line: 16}},
		{path: "/articles", query: "id=7", miss: true},
		{path: "/store", query: "id=my-blog-post", want: Match{Status: 301, To: "/blog/my-blog-post?id=my-blog-post", Line: 17}},
		{path: "/store", query: "id=a%2Fb", want: Match{Status: 301, To: "/blog/a%2Fb?id=a%2Fb", Line: 17}},
		{path: "/store", miss: true},
		{path: "/lit", query: "page=news", want: Match{Status: 301, To: "/news-page?page=news", Line: 18}},
		{path: "/lit", query: "page=other", miss: true},
		// a target with its own query: the request's query is not passed on
		{path: "/target", query: "q=a+b&z=1", want: Match{Status: 301, To: "/search?term=a+b&src=redirect", Line: 19}},
		{path: "/anchor", query: "x=1", want: Match{Status: 301, To: "/page?x=1#section", Line: 20}},
		// pass-through of the query on a plain rule
		{path: "/home", query: "utm=1", want: Match{Status: 301, To: "/?utm=1", Line: 3}},
		// case-sensitive paths
		{path: "/Case", want: Match{Status: 301, To: "/upper", Line: 21}},
		{path: "/case", miss: true},
		{path: "/HOME", miss: true},
		// SPA rewrite
		{path: "/app/users/42", want: Match{Status: 200, To: "/app/index.html", Rewrite: true, Path: "/app/index.html", Line: 22}},
		// shadowing: a file answers the path, only forced rules apply
		{path: "/home", exists: true, miss: true},
		{path: "/app/users/42", exists: true, miss: true},
		{path: "/forced", exists: true, want: Match{Status: 301, To: "/elsewhere", Line: 23}},
		{path: "/forced-rw/x", exists: true, want: Match{Status: 200, To: "/index.html", Rewrite: true, Path: "/index.html", Line: 24}},
		// first match wins
		{path: "/first", want: Match{Status: 301, To: "/one", Line: 25}},
		// a leading placeholder, merged in file order with literal buckets
		{path: "/fr/docs/a/b", want: Match{Status: 301, To: "/docs/fr/a/b", Line: 27}},
		{path: "/abs/p/q", query: "k=v", want: Match{Status: 302, To: "https://example.com/x/p/q?from=sitedrop", Line: 28}},
		// captured text is escaped in the target
		{path: "/sp/a b/ü?", want: Match{Status: 301, To: "/s/a%20b/%C3%BC%3F", Line: 29}},
		{path: "/nothing/here", miss: true},
		{path: "/", miss: true},
	}
	for _, tc := range cases {
		got, ok := r.Match(tc.path, tc.query, tc.exists)
		if tc.miss {
			if ok {
				t.Errorf("%s?%s exists=%v: matched %+v, want no match", tc.path, tc.query, tc.exists, got)
			}
			continue
		}
		if !ok || got != tc.want {
			t.Errorf("%s?%s exists=%v: got %+v %v, want %+v", tc.path, tc.query, tc.exists, got, ok, tc.want)
		}
	}
}

// TestRedirectsMatchOrderAcrossBuckets checks that first-match-wins holds
// across the literal map, the first-segment bucket and the wildcard list.
func TestRedirectsMatchOrderAcrossBuckets(t *testing.T) {
	r := compile(t, "/:any/x /wild 302\n/a/* /bucket 302\n/a/x /literal 302\n/* /all 302\n")
	for path, want := range map[string]string{"/a/x": "/wild", "/a/y": "/bucket", "/b/y": "/all", "/": "/all"} {
		got, ok := r.Match(path, "", false)
		if !ok || got.To != want {
			t.Errorf("%s: got %+v, want %s", path, got, want)
		}
	}
	r = compile(t, "/a/x /literal 302\n/:any/x /wild 302\n")
	if got, _ := r.Match("/a/x", "", false); got.To != "/literal" {
		t.Errorf("literal first: got %+v", got)
	}
}

// TestRedirectsNil checks that a nil or empty set matches nothing, and
// that CompileRedirects leaves out rules that are not valid.
func TestRedirectsNil(t *testing.T) {
	var r *Redirects
	if _, ok := r.Match("/a", "", false); ok || r.Len() != 0 {
		t.Error("nil set matched")
	}
	r = CompileRedirects([]Redirect{
		{From: "/ok", To: "/b", Status: 301},
		{From: "/proxy", To: "https://x.example/", Status: 200},
		{From: "no-slash", To: "/b", Status: 301},
		{From: "/bad-status", To: "/b", Status: 0},
	})
	if r.Len() != 1 {
		t.Fatalf("compiled %d rules, want 1", r.Len())
	}
	if _, ok := r.Match("/proxy", "", false); ok {
		t.Error("a proxy rule was compiled")
	}
}

// TestMatchQueryConditionsManyNames: query conditions read the first
// parameter of their name, as written or decoded, whatever the number of
// names a file's conditions use (past the 16 a request holds inline).
func TestMatchQueryConditionsManyNames(t *testing.T) {
	var sb strings.Builder
	for i := range 20 {
		fmt.Fprintf(&sb, "/p k%d=v%d /t%d 302\n", i, i, i)
	}
	sb.WriteString("/p k%2B=:x /plus/:x 302\n")
	r := compile(t, sb.String())
	for _, tc := range []struct {
		query string
		line  int // 0: no match
	}{
		{"k19=v19", 20}, {"k3=v3", 4}, {"k%31%39=v19", 20}, {"k19=v%319", 20}, {"z=1&k19=v19&k3=v3", 4},
		{"k19=x&k19=v19", 0}, {"k%31%39=x&k19=v19", 0}, {"k19=v1", 0}, {"k19=v%zz19", 0}, {"", 0},
		{"k%2B=a", 21}, {"k%2B=a&k+=b", 21},
	} {
		m, ok := r.Match("/p", tc.query, false)
		if ok != (tc.line != 0) || m.Line != tc.line {
			t.Errorf("?%s: matched %v line %d, want line %d", tc.query, ok, m.Line, tc.line)
		}
	}
}

// BenchmarkMatchQueryConditions: 1,000 rules "/* aN=x /t" that a
// request's query (1, 4 or 16 KiB of "z=1&" then "a1=y&a999=y") fails
// at their condition: the query is read once, so the time per request
// grows with the query and the rules added, not multiplied (reading the
// query once per condition cost 1,000 × its parameters).
func BenchmarkMatchQueryConditions(b *testing.B) {
	var sb strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&sb, "/* a%d=x /t 302\n", i)
	}
	rs, _ := ParseRedirects([]byte(sb.String()))
	r := CompileRedirects(rs)
	for _, n := range []int{1 << 10, 4 << 10, 16 << 10} {
		q := strings.Repeat("z=1&", n/4) + "a1=y&a999=y"
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := r.Match("/x", q, false); ok {
					b.Fatal("matched")
				}
			}
		})
	}
}
