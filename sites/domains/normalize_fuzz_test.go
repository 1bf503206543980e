package domains_test

import (
	"strings"
	"testing"

	"sitedrop/sites/domains"
)

// FuzzNormalize: whatever an owner types as a custom domain, Normalize
// does not panic, and what it accepts is a name the DNS and the records
// can carry: lower-case ASCII letters, digits, hyphens and dots, at most
// 233 characters, labels of 1 to 63 characters, not an IP, and the same
// when normalised again.
func FuzzNormalize(f *testing.F) {
	for _, seed := range []string{
		"Shop.Example.COM", " example.com. ", "bücher.example", "xn--bcher-kva.de",
		"192.0.2.1", "[2001:db8::1]", "co.uk", "a..example.com", "https://example.com/x",
		"example.com:8080", strings.Repeat("a", 64) + ".example.com", "ＥＸＡＭＰＬＥ.com",
		"xn--.example.com", "a\u200d.example.com", "_dmarc.example.com",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := domains.Normalize(raw)
		if err != nil {
			if got != "" {
				t.Fatalf("Normalize(%q) = %q with error %v", raw, got, err)
			}
			return
		}
		if len(got) == 0 || len(got) > 233 {
			t.Fatalf("Normalize(%q) = %q: length %d", raw, got, len(got))
		}
		for _, c := range got {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
				t.Fatalf("Normalize(%q) = %q: character %q", raw, got, c)
			}
		}
		labels := strings.Split(got, ".")
		if len(labels) < 2 {
			t.Fatalf("Normalize(%q) = %q: one label", raw, got)
		}
		for _, l := range labels {
			if len(l) == 0 || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
				t.Fatalf("Normalize(%q) = %q: label %q", raw, got, l)
			}
		}
		again, err := domains.Normalize(got)
		if err != nil || again != got {
			t.Fatalf("Normalize(%q) = %q, but again: %q, %v", raw, got, again, err)
		}
	})
}
