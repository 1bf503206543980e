package sites

import (
	"errors"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// FuzzNormalizePath: NormalizePath never panics; it refuses with a
// *PathError naming the input; and a path it accepts is clean (valid
// UTF-8, no control character or backslash, relative, no empty, "." or
// ".." segment, within the length and depth limits), is the input less at
// most one leading "/" or "./", and normalises to itself.
func FuzzNormalizePath(f *testing.F) {
	for _, s := range []string{
		// accepted shapes
		"index.html", "/index.html", "./css/site.css", "café/ü.html", ".well-known/x", "a/.b", "%2e%2e/x",
		// every refused shape of decisions.md
		"", "/", "./", "a//b", "a/", "//abs", "/./a", "././a", ".//a", ".", "..", "../x", "a/../b", "a/./b", "x/..",
		`a\b`, `..\x`, "a\x00b", "a\nb", "a\rb", "a\tb", "a\x1bb", "a\x7fb", "a\u0085b", "a\u009bb", "\xff", "a\xc3",
		"/" + strings.Repeat("x", maxFilePathLen), strings.Repeat("x", maxFilePathLen+1), strings.Repeat("x", maxFilePathLen),
		strings.Repeat("a/", maxFilePathSegments) + "a", strings.Repeat("a/", maxFilePathSegments-1) + "a",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		q, err := NormalizePath(p)
		if err != nil {
			var pe *PathError
			if !errors.As(err, &pe) || pe.Path != p || pe.Msg == "" {
				t.Fatalf("NormalizePath(%q): error %T %v is not a *PathError naming the input", p, err, err)
			}
			if q != "" {
				t.Fatalf("NormalizePath(%q) = %q with an error", p, q)
			}
			return
		}
		if q != p && "/"+q != p && "./"+q != p {
			t.Fatalf("NormalizePath(%q) = %q: more than one leading / or ./ stripped, or changed", p, q)
		}
		if !utf8.ValidString(q) || q == "" || len(q) > maxFilePathLen || strings.HasPrefix(q, "/") || strings.ContainsRune(q, '\\') {
			t.Fatalf("NormalizePath(%q) = %q is not clean", p, q)
		}
		for _, r := range q {
			if unicode.IsControl(r) {
				t.Fatalf("NormalizePath(%q) = %q has the control character %U", p, q, r)
			}
		}
		segs := strings.Split(q, "/")
		if len(segs) > maxFilePathSegments {
			t.Fatalf("NormalizePath(%q) = %q has %d segments", p, q, len(segs))
		}
		for _, s := range segs {
			if s == "" || s == "." || s == ".." {
				t.Fatalf("NormalizePath(%q) = %q has the segment %q", p, q, s)
			}
		}
		if again, err := NormalizePath(q); err != nil || again != q {
			t.Fatalf("NormalizePath(%q) = %q, but normalising that again gives %q, %v", p, q, again, err)
		}
	})
}
