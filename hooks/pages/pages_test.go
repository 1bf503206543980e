package pages

import "testing"

// TestSafeNext: a ?next= target is kept only when it is a path on this
// host.
func TestSafeNext(t *testing.T) {
	for in, want := range map[string]string{
		"":                      "/account",
		"/claim/x?token=y":      "/claim/x?token=y",
		"//evil.example":        "/account",
		"/\\evil.example":       "/account",
		"https://evil.example/": "/account",
		"javascript:alert(1)":   "/account",
		"account":               "/account",
		"/a\nb":                 "/account",
	} {
		if got := safeNext(in); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", in, got, want)
		}
	}
}
