package rules

import (
	"crypto/sha256"
	"crypto/subtle"
	"slices"
	"strings"
)

// headerToken is one piece of a compiled _headers path pattern.
type headerToken struct {
	kind byte   // tokLit, tokSeg, tokStar or tokSegs
	lit  string // tokLit: the text, lower-cased (paths are compared lower-cased)
	// look is set on a literal between two "*" that only "*" parts follow
	// ("/*a/*/b", "/*a/*"): lit+"/", the text as it must be found, since
	// those parts' segments start at a "/" right after it. end: the path
	// may also end right after lit (the "*" parts end the pattern).
	look string
	end  bool
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
	return toks, lookAhead(toks)
}

// isStar tells the two kinds of "*" token.
func isStar(kind byte) bool { return kind == tokStar || kind == tokSegs }

// lookAhead sets look and end on the literals between two "*" that only
// "*" parts follow (see headerToken), and says why the pattern cannot be
// matched when a ":name" stands between two "*" (as checkHeaderPattern).
func lookAhead(toks []headerToken) string {
	first := slices.IndexFunc(toks, func(t headerToken) bool { return isStar(t.kind) })
	last := len(toks) - 1
	for last >= 0 && !isStar(toks[last].kind) {
		last--
	}
	for k := range toks {
		t := &toks[k]
		if t.kind == tokSeg && first >= 0 && first < k && k < last {
			return `a placeholder between two "*" is not supported`
		}
		if t.kind != tokLit || k == 0 || !isStar(toks[k-1].kind) || k+1 == len(toks) || !isStar(toks[k+1].kind) {
			continue
		}
		n := k + 1
		for n < len(toks) && toks[n].kind == tokSegs {
			n++
		}
		if n == len(toks) || !isStar(toks[n].kind) {
			t.look, t.end = t.lit+"/", n == len(toks)
		}
	}
	return ""
}

// matchHeaderPattern tells whether path p (lower-cased, its trailing
// slash dropped) matches the tokens, in one pass over p and the pattern,
// whatever the number of "*": it never comes back.
//
// The pattern is read as a head, "*" runs with one literal between two
// runs, and a tail. The head (before the first "*") is matched from the
// start and the tail (after the last one) from the end, each in one way
// only: a ":name" there is the segment up to the next (head) or from the
// previous (tail) "/", since what follows or precedes it starts or ends
// with "/" (checkHeaderPattern refuses a ":name" between two "*"). Each
// literal between two runs is found where it first ends, from where the
// previous one ended (strings.Index, linear: Rabin-Karp on long text).
//
// A run of "*" tokens is a plain "*" (any text, ".*") when it holds a
// "*" within a part, and otherwise "*" parts only, "(/.*)?": nothing, or
// a "/" and anything. After a plain "*" the first occurrence is the right
// one: if the path matches with the literal ending at e, it ending at the
// first place e' <= e leaves the "*" after it more room (it starts at e'
// and can take p[e':e] too), and the next literal, found from e', is
// found no later than from e. For "*" parts, "(/.*)?" before the next
// literal (which starts with "/": "…/*/b" compiles to "(/.*)?" then
// "/b") or the end is ".*" once the path has a "/" (or ends) where the
// run starts, and fails otherwise; so a literal followed by such a run
// is searched as literal+"/" (look, a "/" it does not take: the next
// literal may start with it), or at the end of the path (end), and the
// same argument holds among those places. By induction on the literals,
// the first places find a match whenever there is one, and what they
// find is one. The work: the head and the tail once, each literal one
// strings.Index from where the last one ended, so O(len(p) + pattern).
func matchHeaderPattern(toks []headerToken, p string) bool {
	k := 0
	j, ok := matchRun(toks, &k, p, 0)
	if !ok {
		return false
	}
	for k < len(toks) {
		plain := false // toks[k] starts a run of "*"
		for ; k < len(toks) && isStar(toks[k].kind); k++ {
			plain = plain || toks[k].kind == tokStar
		}
		if !plain && j < len(p) && p[j] != '/' {
			return false // "(/.*)?" takes nothing here, and what follows starts with "/"
		}
		n := k
		for n < len(toks) && !isStar(toks[n].kind) {
			n++
		}
		if n == len(toks) {
			return matchTail(toks[k:], p, j)
		}
		if n != k+1 || toks[k].kind != tokLit {
			return false // a ":name" between two "*": compileHeaderPattern refuses it
		}
		if j, ok = findLiteral(&toks[k], p, j); !ok {
			return false
		}
		k = n
	}
	return j == len(p)
}

// matchRun matches the literals and ":name" from toks[*k] at p[j:] up
// to the next "*" token (left at *k) and returns where they end.
func matchRun(toks []headerToken, k *int, p string, j int) (int, bool) {
	for ; *k < len(toks); *k++ {
		switch t := &toks[*k]; t.kind {
		case tokLit:
			if !strings.HasPrefix(p[j:], t.lit) {
				return j, false
			}
			j += len(t.lit)
		case tokSeg:
			q := strings.IndexByte(p[j:], '/')
			if q < 0 {
				q = len(p) - j
			}
			if q == 0 {
				return j, false
			}
			j += q
		default:
			return j, true
		}
	}
	return j, true
}

// findLiteral returns where the first occurrence of t's text in p[from:]
// ends: followed by "/" when t.look is set, or at the end of p when
// t.end is too.
func findLiteral(t *headerToken, p string, from int) (int, bool) {
	if t.look == "" {
		if i := strings.Index(p[from:], t.lit); i >= 0 {
			return from + i + len(t.lit), true
		}
		return 0, false
	}
	if i := strings.Index(p[from:], t.look); i >= 0 {
		return from + i + len(t.lit), true
	}
	if t.end && len(p)-from >= len(t.lit) && strings.HasSuffix(p, t.lit) {
		return len(p), true
	}
	return 0, false
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
