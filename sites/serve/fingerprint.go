package serve

import "strings"

// Fingerprinted reports whether a file name carries a content hash, so
// that its content never changes under that name and browsers may cache
// it for a year ("immutable"). The rule: in the base name, before the
// extension, a token set off by ".", "-" or "_" (with something before
// the separator) and running to the extension or to the next "." is a
// hash, which is either
//
//   - hex: 8 or more lower-case hex digits mixing digits and letters (at
//     least three runs, so neither "letters then digits" nor "digits then
//     letters"): main.3f2a1b4c.chunk.js (webpack, Create React App),
//     main-0a1b2c3d4e5f6a7b.js (Next.js), main.min.<64 hex>.css (Hugo),
//     chunk-4f5e2a1b3c9d8e7f.css;
//   - base64url: exactly 8 characters of A-Z a-z 0-9 - _ with a
//     capital and at least four runs of character classes (capitals,
//     small letters, digits, "-" or "_"); digits all at one end need six
//     runs (photo_DSC01234, photo-iPhone12 are names, BkLmYwM5 a hash):
//     index-BT0GIVA5.css (Vite), vendor-B7x_k2Qa.css (Rollup),
//     post.CP3Lnalr.css (Astro), index.BZhg4b_K.js (SvelteKit). Without
//     any digit, only after a "." and with two capitals in a row:
//     app.DZopBupu.js (VitePress); letters alone after "-" or "_" read as
//     a CamelCase word (icon-LinkedIn.svg) and do not count.
//
// HTML pages (.html, .htm) are never fingerprinted: a page is always
// revalidated. A false negative only costs a revalidation; a false
// positive would pin stale content for a year, so the rule is strict.
// The work is linear in the name's length.
func Fingerprinted(name string) bool {
	base := name[strings.LastIndexByte(name, '/')+1:]
	dot := strings.LastIndexByte(base, '.')
	if dot <= 0 || isPageName(base) {
		return false // no extension: not an asset
	}
	stem := base[:dot]
	for i := 1; i < len(stem); i++ {
		sep := stem[i]
		if sep != '.' && sep != '-' && sep != '_' {
			continue
		}
		token := stem[i+1:]
		if j := strings.IndexByte(token, '.'); j >= 0 {
			token = token[:j] // main.3f2a1b4c.chunk.js
		}
		if isHexHash(token) || isBase64Hash(token, sep == '.') {
			return true
		}
	}
	return false
}

// isPageName reports whether name ends in .html or .htm (any case).
func isPageName(name string) bool {
	return hasSuffixFold(name, ".html") || hasSuffixFold(name, ".htm")
}

func hasSuffixFold(s, suffix string) bool {
	return len(s) >= len(suffix) && strings.EqualFold(s[len(s)-len(suffix):], suffix)
}

// Character classes of a hash's characters.
const (
	classOther = iota
	classUpper
	classLower
	classDigit
	classSep
)

func charClass(c byte) int {
	switch {
	case c >= 'A' && c <= 'Z':
		return classUpper
	case c >= 'a' && c <= 'z':
		return classLower
	case c >= '0' && c <= '9':
		return classDigit
	case c == '-' || c == '_':
		return classSep
	}
	return classOther
}

// isHexHash: 8 or more lower-case hex digits in at least three runs of
// digits and letters.
func isHexHash(s string) bool {
	if len(s) < 8 {
		return false
	}
	runs, prev := 0, classOther
	for i := 0; i < len(s); i++ {
		c := s[i]
		cl := charClass(c)
		if cl != classDigit && (c < 'a' || c > 'f') {
			return false
		}
		if cl != prev {
			runs++
			prev = cl
		}
	}
	return runs >= 3
}

// isBase64Hash: exactly 8 base64url characters with a capital, at least
// four runs of character classes (six when the digits are all at one
// end); a
// token without digits counts only after a dot (afterDot) and with two
// capitals in a row.
func isBase64Hash(s string, afterDot bool) bool {
	if len(s) != 8 {
		return false
	}
	runs, digitRuns, upper, upperPair := 0, 0, false, false
	prev := classOther
	for i := 0; i < len(s); i++ {
		cl := charClass(s[i])
		switch cl {
		case classOther:
			return false
		case classUpper:
			upperPair = upperPair || prev == classUpper
			upper = true
		}
		if cl != prev {
			runs++
			if cl == classDigit {
				digitRuns++
			}
		}
		prev = cl
	}
	if !upper || runs < 4 {
		return false
	}
	if digitRuns == 0 {
		return afterDot && upperPair
	}
	// Digits in one run at the start or the end are a number beside a
	// word (DSC01234, iPhone12, 4KVideoHD), unless the letters switch
	// case at least four times, as no word does (BkLmYwM5).
	edgeOnly := digitRuns == 1 && (charClass(s[0]) == classDigit || charClass(s[len(s)-1]) == classDigit)
	return !edgeOnly || runs >= 6
}
