package rules

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestHeadersMatchBoundedWork: what one request can cost is bounded.
// Many matching blocks setting distinct names merge into at most
// MaxHeadersPerAnswer headers, and a "*" before long text scans the path
// once. The deadline is generous: the quadratic versions (found in
// review) took seconds here, the linear ones take about a millisecond.
func TestHeadersMatchBoundedWork(t *testing.T) {
	var sb strings.Builder
	for b := range MaxHeaderBlocks {
		sb.WriteString("/*\n")
		for k := range MaxHeadersPerBlock {
			fmt.Fprintf(&sb, "  X-%d-%d: v\n", b, k)
		}
	}
	hs, warns := ParseHeaders([]byte(sb.String()))
	if len(hs) != MaxHeaderBlocks || len(warns) != 0 {
		t.Fatalf("%d blocks, %d warnings", len(hs), len(warns))
	}
	h := CompileHeaders(hs)
	start := time.Now()
	m := h.Match("/")
	if len(m.Headers) != MaxHeadersPerAnswer || m.Headers[0].Name != "X-0-0" {
		t.Errorf("merged %d headers (first %+v), want the first %d", len(m.Headers), m.Headers[0], MaxHeadersPerAnswer)
	}
	long := CompileHeaders([]HeaderRule{{Pattern: "/*" + strings.Repeat("a", 4000) + "b", Headers: []Header{{"X-A", "1"}}}})
	path := "/" + strings.Repeat("a", 64<<10)
	for range 100 {
		if got := long.Match(path); len(got.Headers) != 0 {
			t.Fatal("matched")
		}
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the worst-case matches took %v", d)
	}
	// the same pattern still matches where it should, in any case
	if got := long.Match("/x/" + strings.Repeat("A", 4000) + "B"); len(got.Headers) != 1 {
		t.Error("the long pattern does not match its own text")
	}
}

// TestMergeHeaderIndex: past the first few names the merge looks names
// up in an index, with the same results as the scan (case-insensitive,
// the later block wins, order kept).
func TestMergeHeaderIndex(t *testing.T) {
	var hs []Header
	var index map[string]int
	for i := range 40 {
		hs, index = mergeHeader(hs, index, Header{fmt.Sprintf("X-%d", i), "a"})
	}
	hs, index = mergeHeader(hs, index, Header{"x-3", "b"})
	hs, _ = mergeHeader(hs, index, Header{"X-30", "c"})
	if len(hs) != 40 || hs[3].Value != "b" || hs[30].Value != "c" || hs[39].Name != "X-39" {
		t.Errorf("merged %+v", hs)
	}
}
