package cli

import (
	"fmt"
	"io"
	"strconv"

	"sitedrop/sites/report"
	"sitedrop/sites/safetext"
	"sitedrop/sites/wire"
)

// printReport writes a short summary of a deploy's quality report to w
// (stderr), one line per kind of finding, naming the first: the whole
// report is in the API's answer. A truncated report's list of
// report.MaxEntries says "100+". The rule lines are printed as warnings
// already, so they are not repeated.
func printReport(w io.Writer, r wire.Report) {
	count := func(n int, one, many string) string {
		s := strconv.Itoa(n)
		if r.Truncated && n >= report.MaxEntries {
			s += "+"
		}
		if n == 1 {
			return s + " " + one
		}
		return s + " " + many
	}
	if l := r.BrokenLinks; len(l) > 0 {
		fmt.Fprintf(w, "report: %s (first: %s → %s)\n", count(len(l), "broken link", "broken links"), safetext.Escape(l[0].Page), safetext.Escape(l[0].Target))
	}
	if f := r.Forms; len(f) > 0 {
		fmt.Fprintf(w, "report: %s (first: %s: %s)\n", count(len(f), "form posts nowhere", "forms post nowhere"), safetext.Escape(f[0].Page), safetext.Escape(f[0].Problem))
	}
	if p := r.UntitledPages; len(p) > 0 {
		fmt.Fprintf(w, "report: %s (first: %s)\n", count(len(p), "page without a title", "pages without a title"), safetext.Escape(p[0]))
	}
	if im := r.LargeImages; len(im) > 0 {
		fmt.Fprintf(w, "report: %s (first: %s, %.1f MiB)\n", count(len(im), "image over 1 MiB", "images over 1 MiB"), safetext.Escape(im[0].Path), float64(im[0].Size)/(1<<20))
	}
}
