package sites

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/pocketbase/pocketbase/core"
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

// TestCheckRules: the limit depends on the owner (anonymous, free, pro);
// redirect rules and _headers blocks count together, and the two files'
// bytes together; a refusal names the limit; within it, the rules and
// warnings are ParseRules'.
func TestCheckRules(t *testing.T) {
	lines := func(n int) []byte {
		var sb strings.Builder
		for i := range n {
			fmt.Fprintf(&sb, "/r%d /t\n", i)
		}
		return []byte(sb.String())
	}
	users := core.NewBaseCollection("users")
	users.Fields.Add(&core.TextField{Name: "plan"})
	user := func(plan string) *core.Record {
		r := core.NewRecord(users)
		r.Set("plan", plan)
		return r
	}
	blocks := []byte("/a\n  X-A: 1\n/b\n  X-B: 1\n")
	cases := []struct {
		name  string
		owner *core.Record
		files []File
		want  string // the refusal; "" when accepted
	}{
		{"anonymous at the limit", nil, []File{{Path: "_redirects", Data: lines(AnonRules)}}, ""},
		{"anonymous over", nil, []File{{Path: "_redirects", Data: lines(AnonRules + 1)}},
			"Too many rules: _redirects and _headers hold more than 1,000 rules and header blocks together; an anonymous site may have 1,000"},
		{"blocks count", nil, []File{{Path: "_redirects", Data: lines(AnonRules - 1)}, {Path: "_headers", Data: blocks}},
			"Too many rules: _redirects and _headers hold 1,001 rules and header blocks together; an anonymous site may have 1,000"},
		{"files elsewhere do not count", nil, []File{{Path: "docs/_redirects", Data: lines(AnonRules + 1)}}, ""},
		{"anonymous bytes", nil, []File{{Path: "_redirects", Data: []byte("/a /b\n")}, {Path: "_headers", Data: make([]byte, AnonRuleBytes)}},
			"Rule files too large: _redirects and _headers are 131,078 bytes together; an anonymous site may have 128 KiB"},
		{"free", user(PlanFree), []File{{Path: "_redirects", Data: lines(FreeRules)}}, ""},
		{"free over", user(PlanFree), []File{{Path: "_redirects", Data: lines(FreeRules + 1)}},
			"Too many rules: _redirects and _headers hold more than 10,000 rules and header blocks together; a site of the free plan may have 10,000"},
		{"no plan is free", user(""), []File{{Path: "_redirects", Data: lines(FreeRules + 1)}}, "a site of the free plan may have 10,000"},
		{"pro", user(PlanPro), []File{{Path: "_redirects", Data: lines(ProRules)}}, ""},
		{"pro over", user(PlanPro), []File{{Path: "_redirects", Data: lines(ProRules + 1)}}, "a site of the pro plan may have 20,000"},
	}
	for _, tc := range cases {
		rs, warns, err := CheckRules(tc.files, RuleLimitOf(tc.owner))
		var rle *RuleLimitError
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.want != "" && (!errors.As(err, &rle) || !strings.Contains(rle.Msg, tc.want)):
			t.Errorf("%s: %v, want a RuleLimitError %q", tc.name, err, tc.want)
		case tc.want == "":
			wantRules, wantWarns := ParseRules(tc.files)
			if len(rs) != len(wantRules) || len(warns) != len(wantWarns) || warns == nil {
				t.Errorf("%s: %d rules %d warnings, ParseRules gives %d %d", tc.name, len(rs), len(warns), len(wantRules), len(wantWarns))
			}
		}
	}
	if got := MaxRuleLimit(); got != RuleLimitOf(user(PlanPro)) {
		t.Errorf("the largest limit %+v is not pro's", got)
	}
}

// TestFormatCount: counts are written with a comma between groups of
// three digits (in refusals here, and in the CLI's upload progress).
func TestFormatCount(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -1234: "-1,234"} {
		if got := FormatCount(n); got != want {
			t.Errorf("FormatCount(%d) = %q, want %q", n, got, want)
		}
	}
}
