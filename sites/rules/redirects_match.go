package rules

import (
	"net/url"
	"strings"
)

// Redirects is a compiled rule set; safe for concurrent use; nil or empty
// matches nothing.
//
// Rules are indexed, so a request looks only at the rules that could
// match it: the literal rules of exactly its path (a map), the pattern
// rules whose first segment is its first segment, and the pattern rules
// that start with a placeholder or a splat; these three lists are merged
// in file order. Forced rules have an index of their own, used when a
// file answers the path (shadowing).
//
// The query conditions' names are numbered (qnames): a request's query is
// read once, at the first rule with conditions whose path matches, for
// the values of all those names (queryIndex), so that each condition
// costs a look-up, not a scan of the query: a long query and many rules
// with conditions add up, they do not multiply.
type Redirects struct {
	rules    []compiledRedirect
	all      redirectIndex
	forced   redirectIndex
	qnames   map[string]int32 // query condition name → its number
	maxQName int              // the longest query condition name
}

// compiledRedirect is a Redirect ready to match.
type compiledRedirect struct {
	Redirect
	from fromPattern
	qnum []int32 // the number of each Query condition's name (Redirects.qnames)
}

// redirectIndex finds the rules that may match a path, by rule number.
type redirectIndex struct {
	literal map[string][]int32 // normalized path → its literal rules
	byFirst map[string][]int32 // first segment → pattern rules starting with it
	wild    []int32            // pattern rules starting with :placeholder or *
	n       int                // how many rules the index holds
}

// add indexes rule i.
func (ix *redirectIndex) add(i int32, fp *fromPattern) {
	ix.n++
	switch {
	case fp.literal:
		if ix.literal == nil {
			ix.literal = map[string][]int32{}
		}
		ix.literal[fp.norm] = append(ix.literal[fp.norm], i)
	case len(fp.segs) == 0 || strings.HasPrefix(fp.segs[0], ":"):
		ix.wild = append(ix.wild, i)
	default:
		if ix.byFirst == nil {
			ix.byFirst = map[string][]int32{}
		}
		ix.byFirst[fp.segs[0]] = append(ix.byFirst[fp.segs[0]], i)
	}
}

// CompileRedirects compiles rules (as ParseRedirects returns them) for
// Match. A rule that is not valid (as ParseRedirects would have warned) is
// left out.
func CompileRedirects(rs []Redirect) *Redirects {
	r := &Redirects{rules: make([]compiledRedirect, 0, len(rs))}
	for _, rule := range rs {
		fp, reason := checkRedirectFrom(&rule, true, false)
		if reason != "" {
			continue
		}
		i := int32(len(r.rules))
		r.rules = append(r.rules, compiledRedirect{Redirect: rule, from: fp})
		c := &r.rules[i]
		for _, q := range rule.Query {
			if r.qnames == nil {
				r.qnames = map[string]int32{}
			}
			n, ok := r.qnames[q.Name]
			if !ok {
				n = int32(len(r.qnames))
				r.qnames[q.Name] = n
				r.maxQName = max(r.maxQName, len(q.Name))
			}
			c.qnum = append(c.qnum, n)
		}
		r.all.add(i, &c.from)
		if rule.Force {
			r.forced.add(i, &c.from)
		}
	}
	return r
}

// Match is what the first applicable rule says to do with a request.
type Match struct {
	Status int    // as the rule says
	To     string // the target with placeholders expanded and the query kept per Netlify's
	// rules (the request's query passes through when `to` has none);
	// percent-encoded, ready for a Location header
	Rewrite bool // Status 200 with a same-site path: serve that path's content
	// Path is the target's path, unescaped, for a rule that serves this
	// site's content (200, 404, 410): the file to answer with.
	Path string
	Line int
}

// Len tells how many rules the set holds.
func (r *Redirects) Len() int {
	if r == nil {
		return 0
	}
	return len(r.rules)
}

// Match returns the first rule (in file order) that applies to the request
// path (as received, unescaped URL path) and raw query. exists tells
// whether a file answers the path (clean-URL variants included): then only
// forced rules apply (shadowing). A miss allocates nothing.
func (r *Redirects) Match(path, rawQuery string, exists bool) (Match, bool) {
	if r == nil || len(r.rules) == 0 {
		return Match{}, false
	}
	ix := &r.all
	if exists {
		ix = &r.forced
	}
	if ix.n == 0 {
		return Match{}, false
	}
	p := trimSlash(path)
	if p == "" {
		p = "/"
	}
	if p[0] != '/' {
		return Match{}, false
	}
	lists := [3][]int32{ix.literal[p], ix.byFirst[firstSegment(p)], ix.wild}
	var b bindings
	var qi queryIndex
	for {
		best, from := int32(-1), -1
		for k := range lists {
			if len(lists[k]) > 0 && (best < 0 || lists[k][0] < best) {
				best, from = lists[k][0], k
			}
		}
		if from < 0 {
			return Match{}, false
		}
		lists[from] = lists[from][1:]
		c := &r.rules[best]
		b = bindings{}
		if c.from.match(p, &b) && (len(c.Query) == 0 || qi.matches(r, c, rawQuery, &b)) {
			return c.result(&b, rawQuery), true
		}
	}
}

// queryIndexInline is how many query condition names a queryIndex holds
// without allocating.
const queryIndexInline = 16

// queryIndex holds, for each query condition name of a rule set, the raw
// (still escaped) value of the first parameter of that name in a
// request's query, read in one pass when a rule first needs it.
type queryIndex struct {
	read   bool
	found  [queryIndexInline]bool
	values [queryIndexInline]string
	more   map[int32]string // past queryIndexInline names, made when one is found
}

// matches tells whether the request's query has every condition of c,
// binding the ":name" ones.
func (qi *queryIndex) matches(r *Redirects, c *compiledRedirect, rawQuery string, b *bindings) bool {
	if !qi.read {
		qi.fill(r, rawQuery)
	}
	for k, q := range c.Query {
		raw, ok := qi.get(c.qnum[k])
		if !ok {
			return false
		}
		if len(q.Value) > 1 && q.Value[0] == ':' && validName(q.Value[1:]) {
			b.bind(q.Value[1:], raw, true)
			continue
		}
		// a value over 3 bytes per byte of q.Value decodes to more than
		// q.Value (or is not valid escaping, and not q.Value as it is):
		// the decoding costs at most what the rule's text does
		if raw != q.Value && (len(raw) > 3*len(q.Value) || unescapeQuery(raw) != q.Value) {
			return false
		}
	}
	return true
}

// fill reads rawQuery once: a parameter is the value of the condition
// name its key is, as written or decoded ("%6Ba" and "k+a" are "ka" and
// "k a"), when no earlier parameter was. A key longer than 3 bytes per
// byte of the longest name is not decoded: it cannot decode to a name.
func (qi *queryIndex) fill(r *Redirects, rawQuery string) {
	qi.read = true
	for rawQuery != "" {
		var kv string
		kv, rawQuery, _ = strings.Cut(rawQuery, "&")
		key, value, _ := strings.Cut(kv, "=")
		if n, ok := r.qnames[key]; ok {
			qi.set(n, value)
		}
		if len(key) <= 3*r.maxQName && strings.ContainsAny(key, "%+") {
			if u := unescapeQuery(key); u != key {
				if n, ok := r.qnames[u]; ok {
					qi.set(n, value)
				}
			}
		}
	}
}

// set records value for name number n, unless a parameter did before.
func (qi *queryIndex) set(n int32, value string) {
	if n < queryIndexInline {
		if !qi.found[n] {
			qi.found[n], qi.values[n] = true, value
		}
		return
	}
	if qi.more == nil {
		qi.more = map[int32]string{}
	}
	if _, ok := qi.more[n]; !ok {
		qi.more[n] = value
	}
}

// get returns the value recorded for name number n.
func (qi *queryIndex) get(n int32) (string, bool) {
	if n < queryIndexInline {
		return qi.values[n], qi.found[n]
	}
	value, ok := qi.more[n]
	return value, ok
}

// unescapeQuery decodes a query component, or returns it as is when it is
// not valid escaping.
func unescapeQuery(s string) string {
	if !strings.ContainsAny(s, "%+") {
		return s
	}
	if u, err := url.QueryUnescape(s); err == nil {
		return u
	}
	return s
}

// result expands the rule's target for the bindings of a match.
func (c *compiledRedirect) result(b *bindings, rawQuery string) Match {
	to, fragment, hasFragment := strings.Cut(c.To, "#")
	path, query, hasQuery := strings.Cut(to, "?")
	var sb strings.Builder
	expand(&sb, path, b, false)
	m := Match{Status: c.Status, Line: c.Line, Rewrite: c.Status == 200}
	if c.Status == 200 || c.Status == 404 || c.Status == 410 {
		m.Path = sb.String()
		if u, err := url.PathUnescape(m.Path); err == nil {
			m.Path = u
		}
	}
	switch {
	case hasQuery:
		sb.WriteByte('?')
		expand(&sb, query, b, true)
	case rawQuery != "":
		sb.WriteByte('?')
		sb.WriteString(rawQuery)
	}
	if hasFragment {
		sb.WriteByte('#')
		expand(&sb, fragment, b, false)
	}
	m.To = sb.String()
	return m
}

// expand writes s with each bound ":name" replaced by its value, escaped
// for a query (inQuery) or a path; unbound names stay as written.
func expand(sb *strings.Builder, s string, b *bindings, inQuery bool) {
	for {
		i := strings.IndexByte(s, ':')
		if i < 0 {
			sb.WriteString(s)
			return
		}
		sb.WriteString(s[:i])
		j := i + 1
		for j < len(s) && isNameByte(s[j]) {
			j++
		}
		value, fromQuery, ok := b.lookup(s[i+1 : j])
		if j == i+1 || !ok {
			sb.WriteString(s[i:j])
			s = s[j:]
			continue
		}
		if fromQuery {
			value = unescapeQuery(value)
		}
		switch {
		case inQuery:
			sb.WriteString(url.QueryEscape(value))
		case fromQuery:
			sb.WriteString(url.PathEscape(value))
		default:
			sb.WriteString((&url.URL{Path: value}).EscapedPath())
		}
		s = s[j:]
	}
}
