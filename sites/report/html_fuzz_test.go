package report

import (
	"context"
	"strings"
	"testing"
)

// FuzzScanHTML checks the link extraction on any input: it never panics,
// keeps to its cap, and finds the href of a plain link put in front of
// the input (the tokenizer reads that tag before anything of the rest).
func FuzzScanHTML(f *testing.F) {
	for _, seed := range []string{
		``,
		`<a href="/x">x</a>`,
		`<img srcset="a.png 1x, b.png 2x" src=c.png><style>p{background:url( "d.png" )}</style>`,
		`<form method=post><input name=q></form><form action="{{SUBMIT_URL}}">`,
		`<title>t</title><base href="/v2/"><script>"<a href=/no>"</script>`,
		`<!-- <a href="/hidden"> --><div style="background:url(e.png)">`,
		`<a href="x`, `<style>@import "f.css"; url(`, "\x00<a\x00href=\x00>",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		const limit = 50
		ps := scanHTML(context.Background(), []byte(`<a href="/first">`+doc), limit)
		if len(ps.refs) > limit {
			t.Fatalf("%d refs, over the cap of %d", len(ps.refs), limit)
		}
		if len(ps.refs) == 0 || ps.refs[0] != (ref{"/first", refPage}) {
			t.Fatalf("the leading link was not found first: %+v", ps.refs)
		}
		for _, r := range ps.refs {
			if r.kind != refPage && r.kind != refAsset {
				t.Fatalf("ref %+v has no kind", r)
			}
		}
		n := 0
		cssURLs([]byte(doc), func(u string) bool {
			if len(u) > len(doc) || !strings.Contains(doc, u) {
				t.Fatalf("css url %q is not part of the input", u)
			}
			n++
			return n < limit
		})
	})
}
