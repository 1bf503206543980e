package rules

import (
	"fmt"
	"strings"
	"testing"
)

// fullHeaders is a _headers of MaxHeaderBlocks blocks that each set
// MaxHeadersPerBlock distinct names in mixed case, the last one given
// again in another case (so joined): the most lines of headers the
// blocks can apply.
func fullHeaders() []byte {
	var sb strings.Builder
	for b := range MaxHeaderBlocks {
		fmt.Fprintf(&sb, "/section-%d/*\n", b)
		for k := range MaxHeadersPerBlock {
			fmt.Fprintf(&sb, "  X-Header-%d: value-%d-%d\n", k, b, k)
		}
		fmt.Fprintf(&sb, "  x-HEADER-%d: again\n", MaxHeadersPerBlock-1)
	}
	return []byte(sb.String())
}

// TestParseHeadersCostPerBlock: reading a _headers costs a few
// allocations per block, none per header line (each line's name is
// looked up in the block's index, not compared with the names before it,
// and lines are not copied one by one), and compiling it a few per
// block too.
func TestParseHeadersCostPerBlock(t *testing.T) {
	data := fullHeaders()
	hs, warns := ParseHeaders(data)
	if len(hs) != MaxHeaderBlocks || len(warns) != 0 {
		t.Fatalf("%d blocks, %d warnings", len(hs), len(warns))
	}
	last := hs[len(hs)-1].Headers
	if len(last) != MaxHeadersPerBlock || last[MaxHeadersPerBlock-1].Value != fmt.Sprintf("value-%d-%d, again", MaxHeaderBlocks-1, MaxHeadersPerBlock-1) {
		t.Fatalf("last block: %d headers, %+v", len(last), last[len(last)-1])
	}
	lines := MaxHeaderBlocks * (MaxHeadersPerBlock + 2)
	parse := testing.AllocsPerRun(3, func() { ParseHeaders(data) })
	if parse > 3*MaxHeaderBlocks {
		t.Errorf("ParseHeaders: %.0f allocations for %d blocks of %d lines", parse, MaxHeaderBlocks, lines)
	}
	compile := testing.AllocsPerRun(3, func() { CompileHeaders(hs) })
	t.Logf("%d lines: ParseHeaders %.0f allocations, CompileHeaders %.0f", lines, parse, compile)
	if compile > 16*MaxHeaderBlocks { // none per header line: 64 a block
		t.Errorf("CompileHeaders: %.0f allocations for %d blocks", compile, MaxHeaderBlocks)
	}
}

// TestParseRedirectsCostPerRule: reading a _redirects allocates nothing
// per line (its fields are not a slice of their own, its From is checked
// without keeping its segments), only the slice of the rules as it grows,
// and compiling it one allocation per rule (its segments: From is
// compiled once, not once more to check it).
func TestParseRedirectsCostPerRule(t *testing.T) {
	const n = 20_000
	var sb strings.Builder
	for i := range n {
		fmt.Fprintf(&sb, "/docs/v%d/:page /guide/%d/:page 301!\n# comment %d\n", i, i, i)
	}
	data := []byte(sb.String())
	rs, warns := ParseRedirects(data)
	if len(rs) != n || len(warns) != 0 {
		t.Fatalf("%d rules, %d warnings", len(rs), len(warns))
	}
	parse := testing.AllocsPerRun(3, func() { ParseRedirects(data) })
	compile := testing.AllocsPerRun(3, func() { CompileRedirects(rs) })
	t.Logf("%d rules: ParseRedirects %.0f allocations, CompileRedirects %.0f", n, parse, compile)
	if parse > n/100 {
		t.Errorf("ParseRedirects: %.0f allocations for %d rules", parse, n)
	}
	if compile > n+n/100 {
		t.Errorf("CompileRedirects: %.0f allocations for %d rules", compile, n)
	}
}

// TestLineReaderChunks: lines read a chunk at a time are the lines of the
// file, across chunk edges, for lines longer than a chunk, CRLF and a
// last line without its newline.
func TestLineReaderChunks(t *testing.T) {
	long := strings.Repeat("x", 3*lineChunk)
	var sb strings.Builder
	for i := range 20_000 {
		fmt.Fprintf(&sb, "  /line-%d\t%s\r\n", i, strings.Repeat("y", i%97))
		if i%5000 == 0 {
			sb.WriteString(long + "\n\n")
		}
	}
	sb.WriteString("last")
	for _, data := range []string{sb.String(), "", "\n", "a", "a\n", long, long + "\nb"} {
		want := strings.Split(data, "\n")
		if strings.HasSuffix(data, "\n") || data == "" {
			want = want[:len(want)-1]
		}
		r := lineReader{data: []byte(data)}
		for i, raw := range want {
			line, rawLen, ok := r.next()
			if !ok || line != strings.TrimSpace(raw) || rawLen != len(raw) || r.num != i+1 {
				t.Fatalf("line %d: %q (%d bytes), %v; want %q (%d bytes)", i+1, cut(line), rawLen, ok, cut(raw), len(raw))
			}
		}
		if _, _, ok := r.next(); ok {
			t.Fatalf("more than the %d lines of %d bytes", len(want), len(data))
		}
	}
}

// TestHeaderBlockHashCollision: two names of one hash in a block (forced
// here: never seen with real names) are still told apart, each joining
// only its own lines.
func TestHeaderBlockHashCollision(t *testing.T) {
	var b headerBlock
	b.openAt("/*", 1)
	for _, line := range []string{"X-A: 1", "X-B: 2"} {
		if reason := b.addLine(line, true); reason != "" {
			t.Fatal(reason)
		}
	}
	b.names[nameKey("x-c")] = 0 // X-C's key leads to X-A
	for _, line := range []string{"x-c: 3", "X-C: 4", "x-a: 5", "x-b: 6"} {
		if reason := b.addLine(line, true); reason != "" {
			t.Fatal(reason)
		}
	}
	rule, _ := b.close()
	want := []Header{{"X-A", "1, 5"}, {"X-B", "2, 6"}, {"x-c", "3, 4"}}
	if fmt.Sprint(rule.Headers) != fmt.Sprint(want) {
		t.Errorf("headers %+v, want %+v", rule.Headers, want)
	}
}

// TestReservedHeaderFast: the lower-casing on the stack finds what
// strings.ToLower finds, for every reserved name in any case, names
// around them, long names and names that are not ASCII.
func TestReservedHeaderFast(t *testing.T) {
	names := []string{"X-Frame-Options", "x-accel", "X-ACCEL-Redirect", "x-envoy-", "X-Envoy",
		"\u212Aeep-Alive", "Set-Coo\u212Aie", "X-Accel-" + strings.Repeat("a", 100), strings.Repeat("b", 200), ""}
	for name := range reservedHeaders {
		if len(name) > maxReservedName {
			t.Errorf("%s is longer than %d bytes", name, maxReservedName)
		}
		names = append(names, name, strings.ToUpper(name), strings.ToUpper(name[:1])+name[1:], name+"x", name[1:])
	}
	for _, p := range reservedPrefixes {
		if len(p) > maxReservedName {
			t.Errorf("%s is longer than %d bytes", p, maxReservedName)
		}
	}
	for _, name := range names {
		why, ok := reservedHeader(name)
		slowWhy, slowOK := reservedHeaderSlow(name)
		if why != slowWhy || ok != slowOK {
			t.Errorf("%q: %v %q, ToLower says %v %q", name, ok, why, slowOK, slowWhy)
		}
	}
	if _, ok := reservedHeader("Clear-SITE-Data"); !ok {
		t.Error("Clear-Site-Data is allowed")
	}
}

// TestNormalizeValue: a value is written as Netlify's parser writes it
// (parts trimmed, joined with ", "), returned as is when it already is.
func TestNormalizeValue(t *testing.T) {
	joinTrimmed := func(v string) string { // the rule, as written before
		v = strings.TrimSpace(v)
		parts := strings.Split(v, ",")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		return strings.Join(parts, ", ")
	}
	for _, v := range []string{"", "a", " a ", "a,b", "a, b", "a ,b", "a,  b", "a, b ", " a, b, c ",
		"a,", "a, ", ",a", ", a", "a,,b", "a, , b", "a,\tb", "a,\u00a0b", "a\u00a0, b", "public, max-age=0, must-revalidate"} {
		if got, want := normalizeValue(v), joinTrimmed(v); got != want {
			t.Errorf("%q: %q, want %q", v, got, want)
		}
	}
	if a := testing.AllocsPerRun(10, func() { normalizeValue("public, max-age=0, must-revalidate") }); a != 0 {
		t.Errorf("a normalized value: %v allocations", a)
	}
}

// TestParseJoinedValuesCost: a name given on many lines of one block has
// its values appended to one buffer, not copied whole at each line (that
// was quadratic: a 2 MiB _headers of such lines allocated 1.2 GB), and
// the value stops at MaxHeaderValueBytes as it did.
func TestParseJoinedValuesCost(t *testing.T) {
	const lines = 3000
	data := []byte("/*\n" + strings.Repeat("X-A: v\n", lines) + "Basic-Auth: u:p\n" + strings.Repeat("basic-auth: u:p\n", 3))
	hs, warns := ParseHeaders(data)
	joins := 1 + (MaxHeaderValueBytes-1)/len(", v")
	if len(hs) != 1 || len(hs[0].Headers) != 2 || hs[0].Headers[0].Value != "v"+strings.Repeat(", v", joins-1) ||
		hs[0].Headers[1].Value != "u:p u:p u:p u:p" {
		t.Fatalf("%+v", hs)
	}
	if last := warns[len(warns)-1]; len(warns) != MaxWarnings || last.Reason != fmt.Sprintf(
		"%d more lines were not applied (only the first %d are listed)", lines-joins-(MaxWarnings-1), MaxWarnings-1) {
		t.Fatalf("%d warnings, the last %+v", len(warns), last)
	}
	if warns[0].Reason != fmt.Sprintf("the value of X-A would pass %d bytes", MaxHeaderValueBytes) {
		t.Errorf("first warning %+v", warns[0])
	}
	// far below one a line (3 a line before; the race detector adds some)
	if a := testing.AllocsPerRun(3, func() { ParseHeaders(data) }); a > lines/4 {
		t.Errorf("ParseHeaders: %.0f allocations for a name on %d lines", a, lines)
	}
}

// TestParseBadLinesCost: past the Warnings kept (MaxWarnings), a line not
// applied costs no allocation (its reason is not written out, a status
// is read without strconv's errors): a file of bad lines costs about
// what its bytes do to read.
func TestParseBadLinesCost(t *testing.T) {
	const n = 20_000
	redirects := strings.Repeat("/a b /c\n/a /b 999\n/:x- /b\n/a /b 301 Country=us\n/a /b 200 x\n", n/5)
	var sb strings.Builder
	sb.WriteString("/*\n" + strings.Repeat("X Bad: v\nSet-Cookie: a=b\nX-A: v\n", n/4))
	for i := range MaxHeadersPerBlock + n/5 {
		fmt.Fprintf(&sb, "X-%d: v\n", i)
	}
	sb.WriteString(strings.Repeat("/:x-\n  X-B: v\n", n/5))
	headers := sb.String()
	rs, rw := ParseRedirects([]byte(redirects))
	hs, hw := ParseHeaders([]byte(headers))
	if len(rs) != 0 || len(rw) != MaxWarnings || len(hs) != 1 || len(hw) != MaxWarnings {
		t.Fatalf("%d rules, %d warnings; %d blocks, %d warnings", len(rs), len(rw), len(hs), len(hw))
	}
	for _, w := range append(rw, hw...) {
		if w.Reason == notExplained {
			t.Fatalf("a kept warning is not explained: %+v", w)
		}
	}
	// the Warnings kept cost a few allocations each, the other lines none
	if a := testing.AllocsPerRun(3, func() { ParseRedirects([]byte(redirects)) }); a > 8*MaxWarnings {
		t.Errorf("ParseRedirects: %.0f allocations for %d bad lines", a, n)
	}
	if a := testing.AllocsPerRun(3, func() { ParseHeaders([]byte(headers)) }); a > 8*MaxWarnings {
		t.Errorf("ParseHeaders: %.0f allocations for %d bad lines", a, n)
	}
}

// TestUnsupportedCondition: the look-up on the stack finds what
// strings.ToLower finds.
func TestUnsupportedCondition(t *testing.T) {
	keys := []string{"", "x", "Countryx", "LANGUAGES", "ſign", "\u212Aey", strings.Repeat("A", 100)}
	for k := range unsupportedConditions {
		if len(k) > maxConditionKey {
			t.Errorf("%s is longer than %d bytes", k, maxConditionKey)
		}
		keys = append(keys, k, strings.ToUpper(k), strings.ToUpper(k[:1])+k[1:], k[1:])
	}
	for _, k := range keys {
		reason, known := unsupportedCondition(k)
		want, wantKnown := unsupportedConditions[strings.ToLower(k)]
		if reason != want || known != wantKnown {
			t.Errorf("%q: %v %q, want %v %q", k, known, reason, wantKnown, want)
		}
	}
}
