package serve

import "strings"

// Fingerprinted reports whether a file name carries a content hash, so
// that its content never changes under that name and browsers may cache
// it for a year ("immutable"). It recognises the names bundlers emit:
//
//   - a hex hash of 8 or more characters with at least one digit and one
//     letter, between dots or after a dash: main.3f2a1b4c.js (webpack,
//     Create React App, Angular), chunk-4f5e2a1b3c9d8e7f.css;
//   - an 8-character base64url hash after a dash with a lower-case letter
//     and a digit or an upper-case letter past its first character:
//     index-DiwrgTda.js, vendor-B7x_k2Qa.css (Vite, Rollup, esbuild).
//
// Plain words (app-settings.js, data-Overview.css) are not fingerprinted;
// such files are revalidated on every use instead. A false negative only
// costs a revalidation; a false positive would pin stale content, so the
// rule is strict.
func Fingerprinted(name string) bool {
	base := name[strings.LastIndexByte(name, '/')+1:]
	dot := strings.LastIndexByte(base, '.')
	if dot <= 0 {
		return false // no extension: not an asset
	}
	stem := base[:dot]
	for i := 0; i < len(stem); i++ {
		if stem[i] != '.' && stem[i] != '-' {
			continue
		}
		token := stem[i+1:]
		if j := strings.IndexAny(token, ".-"); j >= 0 && stem[i] == '.' {
			token = token[:j] // main.3f2a1b4c.chunk.js
		}
		if isHexHash(token) || (stem[i] == '-' && isBase64Hash(token)) {
			return true
		}
	}
	return false
}

// isHexHash: 8 or more hex digits, with a digit and a letter.
func isHexHash(s string) bool {
	if len(s) < 8 {
		return false
	}
	var digit, letter bool
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digit = true
		case c >= 'a' && c <= 'f':
			letter = true
		default:
			return false
		}
	}
	return digit && letter
}

// isBase64Hash: exactly 8 base64url characters with a lower-case letter
// and, past the first character, a digit or an upper-case letter.
func isBase64Hash(s string) bool {
	if len(s) != 8 {
		return false
	}
	var lower, mark bool
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z':
			lower = true
		case c >= '0' && c <= '9', c >= 'A' && c <= 'Z':
			if i > 0 {
				mark = true
			}
		case c == '_' || c == '-':
		default:
			return false
		}
	}
	return lower && mark
}
