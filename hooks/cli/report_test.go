package cli

import (
	"strings"
	"testing"

	"sitedrop/sites/client"
	"sitedrop/sites/report"
	"sitedrop/sites/safetext"
)

func TestPrintReport(t *testing.T) {
	t.Parallel()
	scenarios := []struct {
		name string
		in   client.Report
		want string
	}{
		{name: "nothing to report", in: client.Report{}, want: ""},
		{
			name: "each kind, the first named",
			in: client.Report{
				BrokenLinks:   []client.BrokenLink{{Page: "about.html", Target: "/missing.png"}, {Page: "index.html", Target: "/x"}},
				Forms:         []client.FormProblem{{Page: "index.html", Problem: "no action"}},
				Rules:         []client.RuleProblem{{File: "_redirects", Line: 2, Message: "printed as a warning"}},
				UntitledPages: []string{"a.html", "b.html", "c.html"},
				LargeImages:   []client.LargeImage{{Path: "big.jpg", Size: 3 << 20}},
			},
			want: "report: 2 broken links (first: about.html → /missing.png)\n" +
				"report: 1 form posts nowhere (first: index.html: no action)\n" +
				"report: 3 pages without a title (first: a.html)\n" +
				"report: 1 image over 1 MiB (first: big.jpg, 3.0 MiB)\n",
		},
		{
			name: "a truncated list",
			in:   client.Report{UntitledPages: make([]string, report.MaxEntries), Truncated: true},
			want: "report: 100+ pages without a title (first: )\n",
		},
		{
			name: "server text is made safe for the terminal",
			in:   client.Report{BrokenLinks: []client.BrokenLink{{Page: "a\x1b[2J.html", Target: "/x"}}},
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
