package cli

import (
	"strings"
	"testing"

	"sitedrop/sites/report"
	"sitedrop/sites/safetext"
	"sitedrop/sites/wire"
)

func TestPrintReport(t *testing.T) {
	t.Parallel()
	scenarios := []struct {
		name string
		in   wire.Report
		want string
	}{
		{name: "nothing to report", in: wire.Report{}, want: ""},
		{
			name: "each kind, the first named",
			in: wire.Report{
				BrokenLinks:   []wire.BrokenLink{{Page: "about.html", Target: "/missing.png"}, {Page: "index.html", Target: "/x"}},
				Forms:         []wire.FormProblem{{Page: "index.html", Problem: "no action"}},
				Rules:         []wire.RuleProblem{{File: "_redirects", Line: 2, Message: "printed as a warning"}},
				UntitledPages: []string{"a.html", "b.html", "c.html"},
				LargeImages:   []wire.LargeImage{{Path: "big.jpg", Size: 3 << 20}},
			},
			want: "report: 2 broken links (first: about.html → /missing.png)\n" +
				"report: 1 form posts nowhere (first: index.html: no action)\n" +
				"report: 3 pages without a title (first: a.html)\n" +
				"report: 1 image over 1 MiB (first: big.jpg, 3.0 MiB)\n",
		},
		{
			name: "a truncated list",
			in:   wire.Report{UntitledPages: make([]string, report.MaxEntries), Truncated: true},
			want: "report: 100+ pages without a title (first: )\n",
		},
		{
			name: "server text is made safe for the terminal",
			in:   wire.Report{BrokenLinks: []wire.BrokenLink{{Page: "a\x1b[2J.html", Target: "/x"}}},
			want: "report: 1 broken link (first: " + safetext.Escape("a\x1b[2J.html") + " → /x)\n",
		},
	}
	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) {
			var out strings.Builder
			printReport(&out, s.in)
			if out.String() != s.want {
				t.Errorf("printed\n%q\nwant\n%q", out.String(), s.want)
			}
		})
	}
}
