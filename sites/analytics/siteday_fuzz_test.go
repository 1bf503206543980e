package analytics

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzTruncateKey checks what the stored lists' size rests on: a cut key
// has at most MaxKeyLen bytes (6 times that as JSON at most), is a prefix
// of the key followed by Ellipsis, stays valid UTF-8 when the key was,
// and cutting it again changes nothing.
func FuzzTruncateKey(f *testing.F) {
	for _, s := range []string{"/", "/a/b.html", strings.Repeat("é", 200), strings.Repeat("\xff", 300), strings.Repeat("<", 257)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, k string) {
		got := TruncateKey(k)
		if len(k) <= MaxKeyLen {
			if got != k {
				t.Fatalf("a short key was changed: %q", got)
			}
			return
		}
		base, ok := strings.CutSuffix(got, Ellipsis)
		if !ok || len(got) > MaxKeyLen || !strings.HasPrefix(k, base) || len(base) < MaxKeyLen-len(Ellipsis)-(utf8.UTFMax-1) {
			t.Fatalf("TruncateKey(%d bytes) = %q", len(k), got)
		}
		if utf8.ValidString(k) && !utf8.ValidString(got) {
			t.Fatalf("cut inside a character: %q", got)
		}
		if TruncateKey(got) != got {
			t.Fatal("not idempotent")
		}
		if b, _ := json.Marshal(got); len(b) > 2+6*MaxKeyLen {
			t.Fatalf("%d bytes as JSON", len(b))
		}
	})
}
