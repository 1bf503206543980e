// Package safetext escapes text from elsewhere (a server's answer, a
// request's path) before a person reads it on a terminal or in a log, so
// that the text cannot drive the terminal or forge a line:
//
//	fmt.Fprintln(os.Stderr, safetext.Escape(serverMessage))
//
// The CLI prints every server text through it; the server's request log
// stores every line through it (EscapeValue for a line's data), with the
// secret query values of its URLs replaced (RedactQuery, RedactURL):
//
//	r.URL.RawQuery = safetext.RedactQuery(r.URL.RawQuery) // token=REDACTED
package safetext

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escape is s with the runes a terminal may act on shown as Go-style
// escapes: C0 controls (tab, CR and LF included), DEL and invalid UTF-8
// bytes as \x1b, C1 controls, format characters (bidi overrides and
// isolates, the BOM...), private-use and unassigned runes as \u202e.
// Printable Unicode, spaces and the emoji joiners ZWJ and ZWNJ are kept.
// A string with nothing to escape is returned as is.
func Escape(s string) string {
	i := 0
	for i < len(s) {
		r, w := utf8.DecodeRuneInString(s[i:])
		if !printable(r, w) {
			break
		}
		i += w
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.WriteString(s[:i])
	for i < len(s) {
		r, w := utf8.DecodeRuneInString(s[i:])
		switch {
		case printable(r, w):
			b.WriteString(s[i : i+w])
		case r == utf8.RuneError:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += w
	}
	return b.String()
}

// printable tells a rune (w bytes of UTF-8) that Escape keeps.
func printable(r rune, w int) bool {
	if r == utf8.RuneError && w == 1 {
		return false
	}
	return unicode.IsGraphic(r) || r == '\u200c' || r == '\u200d'
}
