package safetext

import "testing"

// TestEscape: runes a terminal acts on are shown as escapes; ordinary
// text, Unicode included, is unchanged.
func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"plain text": "plain text",
		"Café 東京 ✓ مرحبا 👩‍💻":          "Café 東京 ✓ مرحبا 👩‍💻",
		"\x1b[2J\x1b]0;title\x07":      `\x1b[2J\x1b]0;title\x07`,
		"a\r\nb\tc\x00d\x7f":           `a\x0d\x0ab\x09c\x00d\x7f`,
		"csi\u009b2J":                  `csi\u009b2J`,
		"rlo\u202etxt.exe":             `rlo\u202etxt.exe`,
		"bad \xff utf-8":               `bad \xff utf-8`,
		"back\\slash stays":            "back\\slash stays",
		"isolate\u2066x\u2069 and bom": `isolate\u2066x\u2069 and bom`,
	} {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
}
