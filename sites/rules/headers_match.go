package rules

import (
	"crypto/sha256"
	"crypto/subtle"
	"strings"
)

// headerToken is one piece of a compiled _headers path pattern.
type headerToken struct {
	kind byte   // tokLit, tokSeg, tokStar or tokRest
	lit  string // tokLit: the text, matched case-insensitively
}

const (
	tokLit  = iota // literal text
	tokSeg         // ":name": one or more characters other than "/"
	tokStar        // "*" within a segment or between segments: any text, "/" included
	tokRest        // a final "/*": nothing, or "/" and anything
)

// compileHeaderPattern compiles a _headers path as Netlify's headers
// parser reads it (for_regexp.ts): split on "/", each part trimmed at its
// end, empty parts dropped; ":name" is one segment, a "*" part is
// anything (as the last part also nothing, so "/a/*" matches "/a"), a "*"
// inside a part is any text ("/*.js" matches "/x/y.js"); one trailing
// slash of the request is ignored.
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
			toks = append(toks, headerToken{kind: tokLit, lit: lit.String()})
			lit.Reset()
		}
	}
	for i, part := range parts {
		if i > 0 {
			lit.WriteByte('/')
		}
		switch {
		case part == "*" && i == len(parts)-1:
			s := strings.TrimSuffix(lit.String(), "/")
			lit.Reset()
			lit.WriteString(s)
			flushLit()
			toks = append(toks, headerToken{kind: tokRest})
		case part[0] == ':':
			if !validName(part[1:]) {
				return nil, "invalid placeholder " + part + " (letters, digits and _ only)"
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

// matchHeaderPattern tells whether path (its trailing slash dropped)
// matches the tokens, case-insensitively. Only a "*" backtracks, to the
// last one seen, so the work is at most len(path) × len(toks).
func matchHeaderPattern(toks []headerToken, p string) bool {
	i, j := 0, 0
	starTok, starPos := -1, 0
	for {
		ok := false
		if i == len(toks) {
			if j == len(p) {
				return true
			}
		} else {
			switch t := &toks[i]; t.kind {
			case tokLit:
				if len(p)-j >= len(t.lit) && strings.EqualFold(p[j:j+len(t.lit)], t.lit) {
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
			case tokStar:
				starTok, starPos = i, j
				i, ok = i+1, true
			case tokRest:
				if j == len(p) || p[j] == '/' {
					return true
				}
			}
		}
		if ok {
			continue
		}
		if starTok < 0 || starPos >= len(p) {
			return false
		}
		starPos++
		i, j = starTok+1, starPos
	}
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
// an invalid name or value.
func CompileHeaders(rs []HeaderRule) *Headers {
	h := &Headers{rules: make([]compiledHeaderRule, 0, len(rs))}
	for _, r := range rs {
		if checkHeaderPattern(r.Pattern) != "" || len(r.Pattern) == 0 || r.Pattern[0] != '/' {
			continue
		}
		toks, _ := compileHeaderPattern(r.Pattern)
		c := compiledHeaderRule{toks: toks}
		for _, hd := range r.Headers {
			if !validHeaderName(hd.Name) || strings.ContainsAny(hd.Value, "\x00\r\n") {
				continue
			}
			if strings.EqualFold(hd.Name, BasicAuthHeader) {
				if creds, reason := parseCredentials(hd.Value); reason == "" {
					c.auth, c.hasAuth = creds, true
				}
				continue
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
	p := path
	if len(p) > 1 && p[len(p)-1] == '/' {
		p = p[:len(p)-1]
	}
	for i := range h.rules {
		r := &h.rules[i]
		if !matchHeaderPattern(r.toks, p) {
			continue
		}
		if r.hasAuth {
			m.BasicAuth = r.auth
		}
	next:
		for _, hd := range r.headers {
			for k := range m.Headers {
				if strings.EqualFold(m.Headers[k].Name, hd.Name) {
					m.Headers[k].Value = hd.Value
					continue next
				}
			}
			m.Headers = append(m.Headers, hd)
		}
	}
	return m
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
