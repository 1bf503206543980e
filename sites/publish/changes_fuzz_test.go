package publish

import (
	"strings"
	"testing"
)

// FuzzParsePosition: ParsePosition, which reads a replica's ?after=,
// never panics; a position it accepts has a short epoch of letters,
// digits, "-" and "_" (no ":") and a non-negative seq, and its String
// reads back the same; the zero Position is "" only.
func FuzzParsePosition(f *testing.F) {
	for _, s := range []string{
		"", "9f86d081884c7d659a2feaa0:0", "e:12", "abc:9223372036854775807", "A-b_c:1",
		"abc", ":1", "abc:", "abc:-1", "abc:+1", "abc:01", "a:b:1", "a b:1", "é:1", "abc:1 ",
		strings.Repeat("a", 64) + ":1", strings.Repeat("a", 65) + ":1", "abc:9223372036854775808",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePosition(s)
		if err != nil {
			if p != (Position{}) {
				t.Fatalf("ParsePosition(%q) = %+v with an error", s, p)
			}
			return
		}
		if s == "" {
			if p != (Position{}) {
				t.Fatalf("ParsePosition(\"\") = %+v", p)
			}
			return
		}
		if p.Epoch == "" || len(p.Epoch) > 64 || strings.IndexFunc(p.Epoch, notEpochRune) >= 0 || p.Seq < 0 {
			t.Fatalf("ParsePosition(%q) = %+v", s, p)
		}
		q, err := ParsePosition(p.String())
		if err != nil || q != p {
			t.Fatalf("ParsePosition(%q) = %+v, whose String %q reads back as %+v, %v", s, p, p.String(), q, err)
		}
	})
}
