package sites

import (
	"strings"
	"testing"
)

// TestRuleWarnings: ParseRules gives the warnings of both files at the root, none for
// files of those names elsewhere, and an empty (not nil) list otherwise.
func TestRuleWarnings(t *testing.T) {
	files := []File{
		{Path: "index.html", Data: []byte("<p>hi")},
		{Path: "_redirects", Data: []byte("/a /b 301\n/proxy https://example.com/ 200\n/bad\n")},
		{Path: "_headers", Data: []byte("/*\n  Set-Cookie: a=b\n  X-Frame-Options: DENY\n")},
		{Path: "docs/_redirects", Data: []byte("nonsense line\n")},
	}
	_, got := ParseRules(files)
	var lines []string
	for _, w := range got {
		lines = append(lines, w.File+":"+string(rune('0'+w.Line)))
	}
	if strings.Join(lines, " ") != "_redirects:2 _redirects:3 _headers:2" {
		t.Fatalf("warnings %+v", got)
	}
	if !strings.Contains(got[0].Reason, "proxy") {
		t.Errorf("proxy warning says %q", got[0].Reason)
	}
	if _, w := ParseRules(files[:1]); w == nil || len(w) != 0 {
		t.Errorf("no rule files: %#v, want an empty list", w)
	}
}
