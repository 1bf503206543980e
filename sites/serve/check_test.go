package serve

import (
	"testing"

	"sitedrop/sites/rules"
)

func TestChecker(t *testing.T) {
	t.Parallel()
	rs, _ := rules.ParseRedirects([]byte("/old /about 301\n/app/* /index.html 200\n/lost /nowhere 200\n/gone / 410\n"))
	files := []string{"index.html", "about.html", "docs/index.html", "a.png", "_redirects", "404.html"}
	plain := NewChecker(files, rules.CompileRedirects(rs), false)
	spa := NewChecker(files, nil, true)
	tests := []struct {
		c    *Checker
		path string
		want Outcome
	}{
		{plain, "/", Served},
		{plain, "/about", Served},
		{plain, "/about.html", Redirected}, // to /about
		{plain, "/docs", Redirected},       // to /docs/
		{plain, "/docs/", Served},
		{plain, "/a.png", Served},
		{plain, "/old", Redirected},
		{plain, "/app/x/y", Served}, // rewritten
		{plain, "/lost", Missing},   // rewritten to nothing
		{plain, "/gone", Missing},
		{plain, "/nope", Missing}, // 404.html answers, with 404
		{plain, "/_redirects", Missing},
		{spa, "/anything/deep", Fallback},
		{spa, "/about", Served},
		{spa, "/missing.png", Fallback},
	}
	for _, tt := range tests {
		if got := tt.c.Resolve(tt.path, ""); got != tt.want {
			t.Errorf("Resolve(%q) = %d, want %d", tt.path, got, tt.want)
		}
	}
	for file, want := range map[string]string{"index.html": "/", "about.html": "/about", "docs/index.html": "/docs/", "a.png": "/a.png"} {
		if got := plain.PageURL(file); got != want {
			t.Errorf("PageURL(%q) = %q, want %q", file, got, want)
		}
	}
}
