package rules

import "strings"

// fromPattern is a compiled From: a literal path, or segments (literal or
// :placeholder) optionally followed by a splat.
//
// As in Netlify's engine, only a final "/*" is a splat: a "*" with more
// path after it ("/mid/*/end", "/k/kubectl_*.md") is a literal
// character, matching a request spelled with that "*" and nothing else,
// and it binds no ":splat" (Netlify's support guide: "A splat can only be
// used at the end of a URL"; kubernetes/website#28917 shows Netlify
// redirecting the literal path). A From that ends in "*" within a
// segment ("/a*") is refused: what Netlify does with it is not known.
type fromPattern struct {
	literal bool     // no placeholder, no splat: norm is the whole path
	norm    string   // From without its trailing slashes ("/" for the root)
	segs    []string // the segments; a placeholder is kept as ":name"
	splat   bool     // ends with "/*"
}

// trimSlash drops trailing slashes ("/a/" and "/a" are one path); the
// root stays "/".
func trimSlash(p string) string {
	for len(p) > 1 && p[len(p)-1] == '/' {
		p = p[:len(p)-1]
	}
	return p
}

// compileFrom checks and compiles a rule's From; a non-empty reason says
// why it is not a valid pattern (written out when e is set). The pattern
// has its segments only when keep is set: a check alone allocates
// nothing.
func compileFrom(from string, keep bool, e explain) (fromPattern, string) {
	if isAbsoluteURL(from) {
		return fromPattern{}, "host rules wait for custom domains"
	}
	if from == "" || from[0] != '/' {
		return fromPattern{}, `the path must start with "/"`
	}
	if strings.IndexByte(from, '?') >= 0 {
		return fromPattern{}, "put query conditions after the path, as name=value"
	}
	if hasSpaceOrControl(from) {
		return fromPattern{}, "the path contains white space or control characters"
	}
	p := fromPattern{norm: trimSlash(from)}
	body := p.norm
	if body == "/*" || strings.HasSuffix(body, "/*") {
		p.splat = true
		body = body[:len(body)-2]
	}
	if !p.splat && strings.HasSuffix(body, "*") {
		return fromPattern{}, `a splat "*" ending the path must be a whole segment ("/path/*")`
	}
	placeholders := false
	if body != "" && body != "/" {
		rest := body[1:]
		if keep {
			p.segs = make([]string, 0, strings.Count(rest, "/")+1)
		}
		for s := range strings.SplitSeq(rest, "/") {
			if strings.HasPrefix(s, ":") {
				if !validName(s[1:]) {
					return fromPattern{}, e.str("invalid placeholder %q (letters, digits and _ only)", s)
				}
				placeholders = true
			}
			if keep {
				p.segs = append(p.segs, s)
			}
		}
	}
	p.literal = !p.splat && !placeholders
	return p, ""
}

// hasSpaceOrControl tells whether s holds a space, a tab, a CR, an LF or
// a NUL, which neither side of a redirect may.
func hasSpaceOrControl(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\r', '\n', 0:
			return true
		}
	}
	return false
}

// validName tells a placeholder name: one or more of [A-Za-z0-9_].
func validName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !isNameByte(name[i]) {
			return false
		}
	}
	return true
}

// isNameByte tells the bytes of a placeholder name.
func isNameByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// firstSegment returns the first segment of a path ("/a/b" → "a", "/" → "").
func firstSegment(p string) string {
	p = p[1:]
	if i := strings.IndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return p
}

// bindings holds what a match captured: the splat and placeholder values,
// substrings of the request (no allocation).
type bindings struct {
	n      int
	names  [MaxPlaceholders]string
	values [MaxPlaceholders]string
	fromQ  [MaxPlaceholders]bool // the value is raw query text (still escaped)
	splat  string
	hasSpl bool
}

// bind records name = value.
func (b *bindings) bind(name, value string, fromQuery bool) {
	if b.n < MaxPlaceholders {
		b.names[b.n], b.values[b.n], b.fromQ[b.n] = name, value, fromQuery
		b.n++
	}
}

// lookup returns the value bound to name.
func (b *bindings) lookup(name string) (value string, fromQuery, ok bool) {
	if name == "splat" && b.hasSpl {
		return b.splat, false, true
	}
	for i := b.n - 1; i >= 0; i-- {
		if b.names[i] == name {
			return b.values[i], b.fromQ[i], true
		}
	}
	return "", false, false
}

// match tells whether the normalized request path p matches, binding the
// placeholders and the splat into b.
func (fp *fromPattern) match(p string, b *bindings) bool {
	if fp.literal {
		return p == fp.norm
	}
	rest := p[1:]
	for _, s := range fp.segs {
		if rest == "" {
			return false
		}
		seg, after, found := strings.Cut(rest, "/")
		if strings.HasPrefix(s, ":") {
			if seg == "" {
				return false
			}
			b.bind(s[1:], seg, false)
		} else if seg != s {
			return false
		}
		if found {
			rest = after
		} else {
			rest = ""
		}
	}
	if fp.splat {
		b.splat, b.hasSpl = rest, true
		return true
	}
	return rest == ""
}
