package rules

import (
	"strconv"
	"sync"
	"testing"
)

// netlify45k generates the lines of netlify/build's
// packages/redirect-parser/tests/fixtures/redirects_file/large_45000_redirects_file:
// "/base/some-N /base/another-N" for N from 0 to 44999. Netlify's file
// holds the same 45,000 lines (1,642,780 bytes) in a slightly shuffled
// order; every From differs, so the order changes no match.
func netlify45k() []byte {
	var b []byte
	for n := range 45000 {
		s := strconv.Itoa(n)
		b = append(b, "/base/some-"...)
		b = append(b, s...)
		b = append(b, " /base/another-"...)
		b = append(b, s...)
		b = append(b, '\n')
	}
	return b
}

var fixture45k = sync.OnceValue(func() *Redirects {
	rs, _ := ParseRedirects(netlify45k())
	return CompileRedirects(rs)
})

// TestNetlify45k checks the generated fixture against Netlify's (its
// size) and that every line parses into a rule that matches.
func TestNetlify45k(t *testing.T) {
	data := netlify45k()
	if len(data) != 1642780 {
		t.Fatalf("generated %d bytes, Netlify's fixture has 1642780", len(data))
	}
	rs, warns := ParseRedirects(data)
	if len(rs) != 45000 || len(warns) != 0 {
		t.Fatalf("%d rules, %d warnings", len(rs), len(warns))
	}
	r := fixture45k()
	if m, ok := r.Match("/base/some-31337/", "", false); !ok || m.To != "/base/another-31337" || m.Status != 301 {
		t.Errorf("hit: %+v %v", m, ok)
	}
}

// TestMatchMissAllocatesNothing checks the hot path: a request no rule
// matches allocates nothing, with or without a file behind it.
func TestMatchMissAllocatesNothing(t *testing.T) {
	r := compile(t, "/a/:x q=:q /b/:x\n/:l/docs/* /d 200\n/forced /f 301!\n/c /d\n")
	big := fixture45k()
	for _, tc := range []struct {
		r       *Redirects
		path, q string
		exists  bool
	}{
		{r, "/a/1", "z=1", false}, // path matches, query does not
		{r, "/en/blog/x", "", false},
		{r, "/c", "", true}, // shadowed
		{r, "/zzz/", "a=%41", false},
		{big, "/assets/app.js", "", true},
		{big, "/base/none", "", false},
	} {
		if a := testing.AllocsPerRun(50, func() { tc.r.Match(tc.path, tc.q, tc.exists) }); a != 0 {
			t.Errorf("%s?%s exists=%v: %v allocations", tc.path, tc.q, tc.exists, a)
		}
	}
}

// BenchmarkMatch measures Match over Netlify's 45,000-rule fixture: a
// served file no rule matches (exists=true), a path no rule matches
// (exists=false), and a hit.
func BenchmarkMatch(b *testing.B) {
	r := fixture45k()
	b.Run("miss-exists", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			r.Match("/assets/index-BT0GIVA5.css", "", true)
		}
	})
	b.Run("miss-no-file", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			r.Match("/base/not-a-rule", "v=1", false)
		}
	})
	b.Run("hit", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			r.Match("/base/some-44999", "", false)
		}
	})
}
