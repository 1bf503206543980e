package safetext

import (
	"reflect"
	"testing"
	"time"
)

// TestEscapeLogLines: what the request log keeps of a string.
func TestEscapeLogLines(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"GET /a b":            "GET /a b",
		"/x\r\nforged":        `/x\x0d\x0aforged`,
		"tab\there":           `tab\x09here`,
		"\x1b[31mred\x7f":     `\x1b[31mred\x7f`,
		"line\u2028sep\u0085": `line\u2028sep\u0085`,
		"bidi\u202egnp.exe":   `bidi\u202egnp.exe`,
		"bad\xffutf8":         `bad\xffutf8`,
		"café ✓":              "café ✓",
	} {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestEscapeValue: a log line's data keeps its shape, every string in it
// escaped, and what the caller logged is not changed.
func TestEscapeValue(t *testing.T) {
	t.Parallel()
	inner := map[string]any{"p\nath": "/x\r\n", "n": 3}
	in := map[string]any{"list": []any{"a\x1b", 1.5, true, nil}, "m": inner, "d": time.Duration(2), "s": []string{"x\ny"}}
	want := map[string]any{
		"list": []any{`a\x1b`, 1.5, true, nil},
		"m":    map[string]any{`p\x0aath`: `/x\x0d\x0a`, "n": 3},
		"d":    float64(2),      // read as its JSON
		"s":    []any{`x\x0ay`}, // likewise
	}
	if got := EscapeValue(in); !reflect.DeepEqual(got, want) {
		t.Errorf("EscapeValue = %#v, want %#v", got, want)
	}
	if inner["p\nath"] != "/x\r\n" {
		t.Error("EscapeValue changed the logged map in place")
	}
}
