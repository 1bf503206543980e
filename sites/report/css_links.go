package report

import "bytes"

// cssURLs calls visit with each URL a style sheet loads: the argument of
// every url(...) and the string of every @import "...", in order, until
// visit returns false. It reads css once: comments and strings are
// skipped (a url( inside them is no link), escapes are left as written.
func cssURLs(css []byte, visit func(string) bool) {
	for i := 0; i < len(css); {
		c := css[i]
		switch {
		case c == '/' && i+1 < len(css) && css[i+1] == '*':
			end := bytes.Index(css[i+2:], []byte("*/"))
			if end < 0 {
				return
			}
			i += 2 + end + 2
		case c == '"' || c == '\'':
			i = skipString(css, i)
		case c == '@' && hasPrefixFold(css[i+1:], "import"):
			i += len("@import")
			i = skipSpace(css, i)
			if i < len(css) && (css[i] == '"' || css[i] == '\'') {
				end := skipString(css, i)
				if !visit(string(css[i+1 : max(i+1, end-1)])) {
					return
				}
				i = end
			}
		case (c == 'u' || c == 'U') && hasPrefixFold(css[i:], "url(") && (i == 0 || !isIdentByte(css[i-1])):
			j := skipSpace(css, i+len("url("))
			var u string
			if j < len(css) && (css[j] == '"' || css[j] == '\'') {
				end := skipString(css, j)
				u = string(css[j+1 : max(j+1, end-1)])
				j = end
			} else {
				end := bytes.IndexByte(css[j:], ')')
				if end < 0 {
					end = len(css) - j
				}
				u = string(bytes.TrimSpace(css[j : j+end]))
				j += end
			}
			if !visit(u) {
				return
			}
			i = j
		default:
			i++
		}
	}
}

// skipString returns the index just past the string that opens at i
// (its quote included), or len(css) when it does not close.
func skipString(css []byte, i int) int {
	q := css[i]
	for j := i + 1; j < len(css); j++ {
		switch css[j] {
		case '\\':
			j++
		case q, '\n':
			return j + 1
		}
	}
	return len(css)
}

// skipSpace returns the index of the first byte at or after i that is
// not CSS white space.
func skipSpace(css []byte, i int) int {
	for i < len(css) && (css[i] == ' ' || css[i] == '\t' || css[i] == '\n' || css[i] == '\r' || css[i] == '\f') {
		i++
	}
	return i
}

// hasPrefixFold reports whether b starts with the lower-case ASCII
// prefix, in any ASCII case.
func hasPrefixFold(b []byte, prefix string) bool {
	return len(b) >= len(prefix) && bytes.EqualFold(b[:len(prefix)], []byte(prefix))
}

// isIdentByte reports whether c may be part of a CSS identifier, so that
// "myurl(" is not taken for url(.
func isIdentByte(c byte) bool {
	return c == '-' || c == '_' || c >= 0x80 || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
