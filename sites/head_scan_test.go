package sites

import (
	"runtime"
	"strings"
	"testing"
)

// TestScanHeadLinear counts the bytes the head scan's searches examine on
// documents built to make a search re-read the rest of the document at
// every token: the work must stay within a small multiple of the document
// size, and within the scan budget for documents larger than it.
func TestScanHeadLinear(t *testing.T) {
	units := map[string]string{
		"empty comments":   "<!---->",
		"comments":         "<!-- a -- b --!- -->",
		"bang comments":    "<!-- x --!>",
		"declarations":     "<!x>",
		"processing":       "<?x?>",
		"bogus end tags":   "</ x>",
		"meta tags":        `<meta name="x" content='y' a=b>`,
		"scripts":          "<script>a<b</scrip</script>",
		"escaped scripts":  "<script><!--<script>a</script>--></script>",
		"styles":           "<style>a</b></style>",
		"titles":           "<title>x</titl</title>",
		"dashes in script": "<script><!-- - -- --- </script>",
		"lone less-thans":  "<<<",
		"white space":      " \n\t",
	}
	prefixes := map[string]string{
		"":     "",
		"head": "<!doctype html><html><head>",
		"open": "<script><!--<script>",
	}
	for name, unit := range units {
		for pname, prefix := range prefixes {
			for _, size := range []int{64 << 10, 256 << 10, 3 * maxHeadScan} {
				doc := []byte(prefix + strings.Repeat(unit, size/len(unit)))
				// Unterminated variants: the last token never ends.
				for _, d := range [][]byte{doc, append(doc[:len(doc):len(doc)], "<!--"...), append(doc[:len(doc):len(doc)], "<meta a='"...)} {
					_, work := scanHeadWork(d)
					limit := 4*min(len(d), maxHeadScan) + 64
					if work > limit {
						t.Errorf("%s after %q, %d bytes: work %d, want at most %d", name, pname, len(d), work, limit)
					}
				}
			}
		}
	}
}

// TestInjectHeadBudget: a head region that does not end within the scan
// budget gets nothing; a large document whose head ends early does.
func TestInjectHeadBudget(t *testing.T) {
	big := strings.Repeat("x", maxHeadScan)
	for _, tt := range []struct {
		name, doc string
		changed   bool
	}{
		{"script longer than the budget", "<head><script>" + big + "</script><title>x</title></head>", false},
		{"comments past the budget", "<head>" + strings.Repeat("<!---->", maxHeadScan/7+1) + "<title>x</title>", false},
		{"unterminated comment past the budget", "<head><!--" + big, false},
		{"body within the budget", "<head></head><body>" + big, true},
		{"text within the budget", "<head><title>x</title></head>" + big, true},
		{"whole document within the budget", "<head><script>" + big[:maxHeadScan-100] + "</script>", true},
	} {
		doc := []byte(tt.doc)
		out := InjectHead(doc, "T", "D", "")
		if changed := len(out) != len(doc); changed != tt.changed {
			t.Errorf("%s: changed = %v, want %v", tt.name, changed, tt.changed)
		}
	}
}

// TestInjectHeadBudgetEdge: markup cut by the budget is not taken for text.
func TestInjectHeadBudgetEdge(t *testing.T) {
	head := "<head><title>x</title>"
	pad := strings.Repeat("<!---->", (maxHeadScan-len(head)-1)/7)
	pad += strings.Repeat(" ", maxHeadScan-len(head)-1-len(pad))
	for _, tail := range []string{"<title>y</title>", "<!-- -->", "<meta name=description>"} {
		doc := []byte(head + pad + tail) // the budget ends just after tail's '<'
		if out := InjectHead(doc, "T", "D", ""); len(out) != len(doc) {
			t.Errorf("tail %q: tags added though the head runs past the budget", tail)
		}
	}
}

// TestScanHeadMemory bounds the bytes the head scan allocates, an
// independent check of the linearity the work counter measures: documents
// of up to and beyond the scan budget made of long tags, many attributes,
// entity-laden values and long declarations must not make it allocate
// more than a small multiple of the budget.
func TestScanHeadMemory(t *testing.T) {
	n := maxHeadScan - 64 // room for the ends of tags: all but two fit in the budget
	docs := map[string]string{
		"meta attributes":       "<meta" + strings.Repeat(" a", n/2) + ">",
		"link attributes":       "<link" + strings.Repeat(" a=b", n/4) + ">",
		"quoted attributes":     "<head" + strings.Repeat(` a="&amp;"`, n/10) + ">",
		"unknown tag":           "<div" + strings.Repeat(" a=&lt;", n/7) + ">",
		"meta tags":             strings.Repeat(`<meta name="description" content="x">`, n/37),
		"link tags":             strings.Repeat(`<link rel="shortcut icon" href="/i">`, n/36),
		"long tag names":        strings.Repeat("<meta"+strings.Repeat("a", 1000)+">", n/1006),
		"entity name":           `<meta name="` + strings.Repeat("&amp;", n/5) + `">`,
		"entity rel":            `<link rel=` + strings.Repeat("&#105;", n/6) + `>`,
		"long doctype":          "<!doctype" + strings.Repeat(" x", n/2) + ">",
		"declarations":          strings.Repeat("<!doctype html>", n/15),
		"templates":             strings.Repeat("<template>", n/10),
		"end tags":              strings.Repeat("</template a=b>", n/15),
		"title with attributes": "<title" + strings.Repeat(" a", n/2) + ">x</title>",
		"unterminated":          "<meta" + strings.Repeat(" a=b", n/4),
		"past the budget":       "<head" + strings.Repeat(" a=b", 3*n/4) + ">",
	}
	// A <meta>'s name or a <link>'s rel is entity-decoded: a copy or two
	// of at most the budget's size.
	const limit = 3 * maxHeadScan
	for name, doc := range docs {
		b := []byte(doc)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		scanHead(b)
		runtime.ReadMemStats(&after)
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > limit {
			t.Errorf("%s (%d bytes): the scan allocated %d bytes, want at most %d", name, len(b), alloc, limit)
		}
	}
}
