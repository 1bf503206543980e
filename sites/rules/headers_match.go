package rules

import (
	"crypto/sha256"
	"crypto/subtle"
	"strings"
)

// headerToken is one piece of a compiled _headers path pattern.
type headerToken struct {
	kind byte   // tokLit, tokSeg, tokStar or tokSegs
	lit  string // tokLit: the text, lower-cased (paths are compared lower-cased)
}

const (
	tokLit  = iota // literal text
	tokSeg         // ":name": one or more characters other than "/"
	tokStar        // "*" within a part: any text, "/" included
	tokSegs        // a "*" part: zero or more whole segments, nothing or "/" and anything
)

// compileHeaderPattern compiles a _headers path as Netlify's headers
// parser reads it (for_regexp.ts): split on "/", each part trimmed at its
// end, empty parts dropped; ":name" is one segment, a "*" part is zero or
// more whole segments wherever it stands ("/a/*" matches /a and /a/x/y,
// "/a/*/b" matches /a/b and /a/x/y/b, not /ax/b), a "*" inside a part is
// any text ("/*.js" matches "/x/y.js"); one trailing slash of the request
// is ignored.
func compileHeaderPattern(p string) ([]headerToken, string) {
	var parts []string
	for _, part := range strings.Split(p, "/") {
		if part = strings.TrimRight(part, " \t"); part != "" {
			parts = append(parts, part)
		}
	}
	var toks []headerToken
	var lit strings.Builder
	lit.WriteByte('/')
	flushLit := func() {
		if lit.Len() > 0 {
			toks = append(toks, headerToken{kind: tokLit, lit: strings.ToLower(lit.String())})
			lit.Reset()
		}
	}
	for i, part := range parts {
		if i > 0 {
			lit.WriteByte('/')
		}
		switch {
		case part == "*":
			// the "/" before it is the start of its segments, when it has any
			s := strings.TrimSuffix(lit.String(), "/")
			lit.Reset()
			lit.WriteString(s)
			flushLit()
			toks = append(toks, headerToken{kind: tokSegs})
		case part[0] == ':':
			if reason := headerPartReason(part, true); reason != "" {
				return nil, reason
			}
			flushLit()
			toks = append(toks, headerToken{kind: tokSeg})
		default:
			for j, piece := range strings.Split(part, "*") {
				if j > 0 {
					flushLit()
					toks = append(toks, headerToken{kind: tokStar})
				}
				lit.WriteString(piece)
			}
		}
	}
	flushLit()
	return toks, ""
}

// matchHeaderPattern tells whether path (lower-cased, its trailing slash
// dropped) matches the tokens. Only a "*" backtracks, to the last one
// seen; a "*" followed by text jumps to the next place that text occurs
// (strings.Index, linear), so a pattern such as "/*aaaa…b" costs one scan
// of the path, not one comparison of the text at every position.
//
// A "*" part (tokSegs) is such a "*" when the path has a "/" where it
// stands (its segments start there), and matches nothing otherwise; only
// in the first case is it the "*" to come back to. Going back to the
// last "*" alone is enough: a later "*" reached at the earliest place
// can stop at any later place too, and the tokens between two "*" move
// forward with it (a literal by its length, ":name" to the next "/").
// The tokens after the pattern's last "*" are matched once, from the end
// of the path (matchTail). So only a "*" followed by another one comes
// back, each time one byte further at least: the work is at most
// len(path) restarts, each at most the length of the text between those
// two "*", with no more state than two integers; a pattern with one "*"
// (or none) costs one pass over the path and the pattern.
func matchHeaderPattern(toks []headerToken, p string) bool {
	i, j := 0, 0
	starTok, starPos := -1, 0
	last := -1 // the last "*": the tokens after it are matched from the end
	for k := range toks {
		if toks[k].kind == tokStar || toks[k].kind == tokSegs {
			last = k
		}
	}
	for {
		ok := false
		if i == len(toks) {
			if j == len(p) {
				return true
			}
		} else {
			switch t := &toks[i]; t.kind {
			case tokLit:
				if len(p)-j >= len(t.lit) && p[j:j+len(t.lit)] == t.lit {
					i, j, ok = i+1, j+len(t.lit), true
				}
			case tokSeg:
				k := strings.IndexByte(p[j:], '/')
				if k < 0 {
					k = len(p) - j
				}
				if k > 0 {
					i, j, ok = i+1, j+k, true
				}
			case tokSegs:
				if j == len(p) || p[j] != '/' {
					i, ok = i+1, true // no segment here: it matches nothing
					break
				}
				fallthrough
			case tokStar:
				if i == last {
					return matchTail(toks[i+1:], p, j)
				}
				starTok, starPos = i, j
				if !skipToLiteral(toks, starTok, p, &starPos) {
					return false
				}
				i, j, ok = i+1, starPos, true
			}
		}
		if ok {
			continue
		}
		if starTok < 0 || starPos >= len(p) {
			return false
		}
		starPos++
		if !skipToLiteral(toks, starTok, p, &starPos) {
			return false
		}
		i, j = starTok+1, starPos
	}
}

// matchTail tells whether the tokens after the last "*" of a pattern
// (literals and ":name" only) match the end of p, starting at from or
// later: the "*" takes what lies between. Read from the end they match
// in one way only (a ":name" is the text after the last "/"; the token
// before it is a literal ending in "/"), so one pass decides, where
// trying each place the "*" may stop would cost len(p) passes.
func matchTail(tail []headerToken, p string, from int) bool {
	j := len(p)
	for k := len(tail) - 1; k >= 0; k-- {
		switch t := &tail[k]; t.kind {
		case tokLit:
			if !strings.HasSuffix(p[:j], t.lit) {
				return false
			}
			j -= len(t.lit)
		case tokSeg:
			q := strings.LastIndexByte(p[:j], '/') + 1
			if q == j {
				return false
			}
			j = q
		}
		if j < from {
			return false
		}
	}
	return true
}

// skipToLiteral moves *pos, where the "*" at toks[star] stops, to the
// next place the text after it occurs; false when it occurs no more (no
// later stop of this "*" can match). A "*" followed by anything else
// stays where it is.
func skipToLiteral(toks []headerToken, star int, p string, pos *int) bool {
	next := star + 1
	if next >= len(toks) || toks[next].kind != tokLit {
		return true
	}
	k := strings.Index(p[*pos:], toks[next].lit)
	if k < 0 {
		return false
	}
	*pos += k
	return true
}

// Headers is a compiled _headers; safe for concurrent use; nil or empty
// matches nothing.
type Headers struct {
	rules []compiledHeaderRule
}

// compiledHeaderRule is a HeaderRule ready to match.
type compiledHeaderRule struct {
	toks    []headerToken
	headers []Header     // without Basic-Auth
	auth    []Credential // Basic-Auth, if the block sets it
	hasAuth bool
}

// CompileHeaders compiles blocks (as ParseHeaders returns them) for Match.
// A block whose pattern is not valid is left out, and so are headers with
// an invalid name or value and the headers a site may not set (as
// ParseHeaders refuses them).
func CompileHeaders(rs []HeaderRule) *Headers {
	h := &Headers{rules: make([]compiledHeaderRule, 0, len(rs))}
	for _, r := range rs {
		if checkHeaderPattern(r.Pattern, false) != "" || len(r.Pattern) == 0 || r.Pattern[0] != '/' {
			continue
		}
		toks, _ := compileHeaderPattern(r.Pattern)
		c := compiledHeaderRule{toks: toks}
		for _, hd := range r.Headers {
			if !validHeaderName(hd.Name) || hasCRLFNUL(hd.Value) {
				continue
			}
			if _, reserved := reservedHeader(hd.Name); reserved {
				continue // never sent, whoever built the rule
			}
			if strings.EqualFold(hd.Name, BasicAuthHeader) {
				if creds, reason := parseCredentials(hd.Value); reason == "" {
					c.auth, c.hasAuth = creds, true
				}
				continue
			}
			if c.headers == nil {
				c.headers = make([]Header, 0, len(r.Headers))
			}
			c.headers = append(c.headers, hd)
		}
		h.rules = append(h.rules, c)
	}
	return h
}

// Matched is what the _headers blocks matching a path set.
type Matched struct {
	Headers   []Header
	BasicAuth []Credential
}

// Credential is one user:password pair of a Basic-Auth header.
type Credential struct{ User, Password string }

// Match returns the headers of every block whose pattern matches path,
// merged in file order, with Basic-Auth taken out into credentials. A
// header name set by several matching blocks takes the value of the last
// one, as Netlify does (the later block overrides, it does not add: see
// netlify/build headers-parser merge.ts and the CLI's headersForPath);
// within one block, repeated lines were joined at parse. A path no block
// matches allocates nothing.
func (h *Headers) Match(path string) Matched {
	var m Matched
	if h == nil {
		return m
	}
	p := strings.ToLower(path) // no copy when it has no capital
	if len(p) > 1 && p[len(p)-1] == '/' {
		p = p[:len(p)-1]
	}
	var index map[string]int // lower-cased name → place in m.Headers, once it is long
	for i := range h.rules {
		r := &h.rules[i]
		if !matchHeaderPattern(r.toks, p) {
			continue
		}
		if r.hasAuth {
			m.BasicAuth = r.auth
		}
		for _, hd := range r.headers {
			m.Headers, index = mergeHeader(m.Headers, index, hd)
		}
	}
	return m
}

// mergeHeader sets hd in headers: it replaces the value of a header of
// the same name (case-insensitive), or is added when there are fewer than
// MaxHeadersPerAnswer. Past a few headers the names are looked up in
// index (made then), so merging stays linear in what the blocks set.
func mergeHeader(headers []Header, index map[string]int, hd Header) ([]Header, map[string]int) {
	const scanUpTo = 16
	if index == nil && len(headers) < scanUpTo {
		for k := range headers {
			if strings.EqualFold(headers[k].Name, hd.Name) {
				headers[k].Value = hd.Value
				return headers, nil
			}
		}
	} else {
		if index == nil {
			index = make(map[string]int, 2*scanUpTo)
			for k, x := range headers {
				index[strings.ToLower(x.Name)] = k
			}
		}
		if k, ok := index[strings.ToLower(hd.Name)]; ok {
			headers[k].Value = hd.Value
			return headers, index
		}
	}
	if len(headers) >= MaxHeadersPerAnswer {
		return headers, index
	}
	if index != nil {
		index[strings.ToLower(hd.Name)] = len(headers)
	}
	return append(headers, hd), index
}

// Authorized tells whether user and password are one of the Basic-Auth
// credentials; with none, every request is. All credentials are compared,
// each in constant time over hashes, so the time does not tell which
// part, or which pair, was close.
func (m Matched) Authorized(user, password string) bool {
	if len(m.BasicAuth) == 0 {
		return true
	}
	u, p := sha256.Sum256([]byte(user)), sha256.Sum256([]byte(password))
	found := 0
	for _, c := range m.BasicAuth {
		cu, cp := sha256.Sum256([]byte(c.User)), sha256.Sum256([]byte(c.Password))
		found |= subtle.ConstantTimeCompare(u[:], cu[:]) & subtle.ConstantTimeCompare(p[:], cp[:])
	}
	return found == 1
}
