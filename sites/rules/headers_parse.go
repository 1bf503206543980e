package rules

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// HeaderRule is one block of _headers: a path pattern and the headers it
// sets, in file order.
type HeaderRule struct {
	Pattern string
	Headers []Header
	Line    int
}

// Header is one header a block sets. A name given on several lines of one
// block has its values joined with ", " (Netlify's rule).
type Header struct{ Name, Value string }

// BasicAuthHeader is the pseudo-header that protects a block's paths with
// HTTP Basic auth ("Basic-Auth: user:pass user2:pass2"); it is never sent.
const BasicAuthHeader = "Basic-Auth"

// reservedHeaders are the headers a site's _headers may not set, with why
// (by lower-case name); a line that sets one is a Warning, and
// CompileHeaders leaves them out whatever its input (see reservedHeader).
// Most are framing and connection headers the server sets itself (Netlify
// ignores them too, see its "Custom headers" limitations). sitedrop adds
// its own: the strong ETag and the Vary of each file, the nosniff every
// answer keeps, the Basic challenge it answers itself, and the headers
// whose effect reaches past the site's own host (audit of issue 26):
//
//   - Set-Cookie (and the obsolete Set-Cookie2): a site host shares its
//     parent domain with every other site and the web host, and a cookie
//     set for the parent would reach them all.
//   - Clear-Site-Data: its "cookies" (or "*") clear the cookies of the
//     whole registrable domain, so one site could sign its visitors out
//     of the web host and every protected site's gate; its other types
//     are the site's own, but there is no use for them worth the header.
//   - Public-Key-Pins: a pin outlives the certificates the server renews
//     on its own, and would lock visitors out of the host.
//   - Headers a reverse proxy in front of the server acts on: nginx's
//     X-Accel-* (X-Accel-Redirect serves any location of the proxy, the
//     internal ones included), X-Sendfile and X-Lighttpd-Send-File (a file
//     of the proxy's disk), Envoy's X-Envoy-* (health and rate limits).
//   - The hop-by-hop headers of RFC 9110 section 7.6.1 that a response may
//     carry (Proxy-Authenticate, Proxy-Connection, TE), besides
//     Connection, Keep-Alive, Trailer, Transfer-Encoding and Upgrade.
//
// Allowed on purpose: Strict-Transport-Security (includeSubDomains and
// preload reach only the site's own host and the hosts under it, never
// its parent, and the server answers https anyway when it has TLS), the
// content policies (Content-Security-Policy, the Cross-Origin-* and
// Permissions-Policy headers), Server-Timing, Link, Refresh and CORS:
// their effect stays within the site's own origin.
var reservedHeaders = map[string]string{
	"accept-ranges": "set by the server", "age": "set by the server",
	"allow": "set by the server", "alt-svc": "set by the server",
	"connection": "set by the server", "content-encoding": "set by the server",
	"content-length": "set by the server", "content-range": "set by the server",
	"date": "set by the server", "keep-alive": "set by the server",
	"location": "set by the server (use _redirects)", "server": "set by the server",
	"trailer": "set by the server", "transfer-encoding": "set by the server",
	"upgrade":                     "set by the server",
	"etag":                        "set by the server (a strong ETag of each file's content)",
	"vary":                        "set by the server (Vary: Accept-Encoding where a file has encoded variants)",
	"x-content-type-options":      "set by the server: every answer keeps nosniff",
	"www-authenticate":            "set by the server (use Basic-Auth)",
	"set-cookie":                  noCookies,
	"set-cookie2":                 noCookies,
	"clear-site-data":             "not allowed: it clears the cookies of every host of the parent domain, signing visitors out of the web host and of other sites",
	"public-key-pins":             pinning,
	"public-key-pins-report-only": pinning,
	"x-sendfile":                  proxyHeader,
	"x-lighttpd-send-file":        proxyHeader,
	"proxy-authenticate":          hopByHop,
	"proxy-connection":            hopByHop,
	"te":                          hopByHop,
}

// Reasons shared by several reserved headers.
const (
	noCookies   = "not allowed: a site host shares its parent domain with other sites, so sites set no cookies from _headers"
	pinning     = "not allowed: a pinned key outlives the certificates the server renews"
	proxyHeader = "not allowed: a reverse proxy in front of the server would act on it"
	hopByHop    = "not allowed: a hop-by-hop header belongs to the connection, not the site"
)

// reservedPrefixes are families of headers a reverse proxy acts on
// (nginx's X-Accel-*, Envoy's X-Envoy-*), by lower-case prefix.
var reservedPrefixes = []string{"x-accel-", "x-envoy-"}

// reservedHeader tells whether a site may not set the header name (any
// case), and why. It runs for every header line and every compiled
// header, so a name of ASCII costs no allocation and, mostly, no map
// look-up: only a name whose length and last letter are those of a
// reserved name (reservedShapes) is lower-cased, on the stack, and
// looked up.
func reservedHeader(name string) (why string, reserved bool) {
	if len(name) > maxReservedName || !isASCII(name) {
		return reservedHeaderSlow(name)
	}
	if len(name) > 0 && reservedShapes[len(name)]&shapeBit(name[len(name)-1]) != 0 {
		var buf [maxReservedName]byte
		lower := buf[:len(name)]
		for i := range len(name) {
			lower[i] = lowerASCII(name[i])
		}
		if why, ok := reservedHeaders[string(lower)]; ok {
			return why, true
		}
	}
	for _, p := range reservedPrefixes {
		if len(name) >= len(p) && strings.EqualFold(name[:len(p)], p) {
			return proxyHeader, true
		}
	}
	return "", false
}

// reservedShapes has, for each length of a reserved name, the shapeBit
// of the last byte of each reserved name of that length.
var reservedShapes = func() (t [maxReservedName + 1]uint64) {
	for name := range reservedHeaders {
		t[len(name)] |= shapeBit(name[len(name)-1])
	}
	return t
}()

// shapeBit is the bit of a name's last byte (any case) in reservedShapes.
func shapeBit(c byte) uint64 { return 1 << (lowerASCII(c) & 63) }

// maxReservedName is the longest name reservedHeader reads without
// strings.ToLower; every name of reservedHeaders and reservedPrefixes is
// shorter (see TestReservedHeaderFast).
const maxReservedName = 64

// reservedHeaderSlow is reservedHeader for any name (Unicode lower-casing,
// as strings.ToLower does): names that are not ASCII, or are long.
func reservedHeaderSlow(name string) (why string, reserved bool) {
	lower := strings.ToLower(name)
	if why, ok := reservedHeaders[lower]; ok {
		return why, true
	}
	for _, p := range reservedPrefixes {
		if strings.HasPrefix(lower, p) {
			return proxyHeader, true
		}
	}
	return "", false
}

// isASCII tells a string of ASCII bytes only.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// lowerASCII lower-cases one ASCII letter.
func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// ParseHeaders reads a _headers file: a line starting with "/" opens a
// block for that path pattern, the lines after it are "Name: value"
// headers of that block; blank lines and "#" comments are skipped. A
// block that sets nothing is dropped. Lines not applied come back as
// Warnings.
func ParseHeaders(data []byte) ([]HeaderRule, []Warning) {
	var rules []HeaderRule
	warn := warnings{file: HeadersFile}
	r := lineReader{data: data}
	var cur headerBlock // the open block (cur.open), none before the first path
	skipBlock := false  // the open block is past a limit
	flush := func() {
		if rule, ok := cur.close(); ok {
			rules = append(rules, rule)
		}
	}
	for {
		line, rawLen, ok := r.next()
		if !ok {
			break
		}
		if line == "" || line[0] == '#' {
			continue
		}
		if rawLen > MaxLineBytes {
			warn.add(r.num, line, fmt.Sprintf("line longer than %d bytes", MaxLineBytes))
			continue
		}
		if line[0] == '/' {
			flush()
			if len(rules) == MaxHeaderBlocks {
				warn.add(r.num, line, fmt.Sprintf("more than %d path blocks: this line and the rest are ignored", MaxHeaderBlocks))
				break
			}
			if reason := checkHeaderPattern(line, explain(!warn.full())); reason != "" {
				warn.add(r.num, line, reason)
				skipBlock = true
				continue
			}
			cur.openAt(line, r.num)
			skipBlock = false
			continue
		}
		if skipBlock {
			warn.add(r.num, line, "the path of this block was not applied")
			continue
		}
		if !cur.open {
			warn.add(r.num, line, `a path line ("/…") must come before the headers`)
			continue
		}
		if reason := cur.addLine(line, explain(!warn.full())); reason != "" {
			if name, _, _ := strings.Cut(line, ":"); strings.EqualFold(strings.TrimSpace(name), BasicAuthHeader) {
				line = BasicAuthHeader + ": (credentials hidden)"
			}
			warn.add(r.num, line, reason)
		}
	}
	flush()
	return rules, warn.done()
}

// headerBlock is the block ParseHeaders is reading: its path, the headers
// set so far, and an index of their names, so that each line finds the
// header of its name (case-insensitive) in one look-up, not by comparing
// it with every name before it; a name given on several lines has its
// values appended to a buffer (joined), made a string once when the block
// closes, not copied whole at each line. So parsing is linear in the
// file. The headers, the index and the buffers are reused from block to
// block; a closed block gets a copy of its headers.
type headerBlock struct {
	open    bool
	pattern string
	line    int
	headers []Header // a joined header's Value is its first line's until close
	// joined[i] is the value of headers[i] once a second line joined it
	// (empty until then: no value is empty).
	joined [][]byte
	// names maps the folded hash of each name (nameKey) to its place in
	// headers. Two names of one hash (never seen in practice) are told
	// apart by comparing them: a look-up that finds another name scans
	// the block (findName), and only the first of them is indexed.
	names map[uint64]int
}

// openAt starts the block of pattern, on line num.
func (b *headerBlock) openAt(pattern string, num int) {
	b.open, b.pattern, b.line = true, pattern, num
	b.headers = b.headers[:0]
	for i := range b.joined {
		b.joined[i] = b.joined[i][:0]
	}
	if b.names == nil {
		b.names = make(map[uint64]int, MaxHeadersPerBlock)
	}
	clear(b.names)
}

// close ends the block; ok is false when there is none or it sets
// nothing (it is dropped).
func (b *headerBlock) close() (rule HeaderRule, ok bool) {
	if !b.open || len(b.headers) == 0 {
		b.open = false
		return HeaderRule{}, false
	}
	b.open = false
	headers := slices.Clone(b.headers)
	for i := range headers {
		if i < len(b.joined) && len(b.joined[i]) > 0 {
			headers[i].Value = string(b.joined[i])
		}
	}
	return HeaderRule{Pattern: b.pattern, Headers: headers, Line: b.line}, true
}

// join appends value to the value of headers[i], after sep; false when
// the value would pass MaxHeaderValueBytes (it is left as it was).
func (b *headerBlock) join(i int, sep, value string) bool {
	for len(b.joined) <= i {
		b.joined = append(b.joined, nil)
	}
	buf := b.joined[i]
	if len(buf) == 0 {
		buf = append(buf, b.headers[i].Value...)
	}
	if len(buf)+len(sep)+len(value) > MaxHeaderValueBytes {
		b.joined[i] = buf
		return false
	}
	buf = append(buf, sep...)
	b.joined[i] = append(buf, value...)
	return true
}

// findName returns the place of the header called name (any case) in the
// block, and whether it has one.
func (b *headerBlock) findName(name string, key uint64) (int, bool) {
	i, ok := b.names[key]
	if !ok {
		return 0, false
	}
	if strings.EqualFold(b.headers[i].Name, name) {
		return i, true
	}
	for i := range b.headers { // another name of the same hash
		if strings.EqualFold(b.headers[i].Name, name) {
			return i, true
		}
	}
	return 0, false
}

// nameKey is the FNV-1a hash of name lower-cased (ASCII: header names are
// tokens), the key of a name in headerBlock.names.
func nameKey(name string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(name); i++ {
		h ^= uint64(lowerASCII(name[i]))
		h *= 1099511628211
	}
	return h
}

// addLine adds a "Name: value" line to the block; a non-empty reason says
// why it was not (written out when e is set).
func (b *headerBlock) addLine(line string, e explain) string {
	if isAbsoluteURL(line) {
		return "host rules wait for custom domains"
	}
	rawName, rawValue, ok := strings.Cut(line, ":")
	if !ok {
		return `not a "Name: value" header line`
	}
	name := strings.TrimSpace(rawName)
	auth := strings.EqualFold(name, BasicAuthHeader)
	var value string
	if auth {
		value = strings.TrimSpace(rawValue) // passwords may hold commas
	} else {
		value = normalizeValue(rawValue)
	}
	if name == "" {
		return "missing header name"
	}
	if !validHeaderName(name) {
		return e.str("invalid header name %q", name)
	}
	if value == "" {
		return "missing header value"
	}
	if hasCRLFNUL(value) {
		return "the value contains a control character (CR, LF or NUL)"
	}
	if why, ok := reservedHeader(name); ok {
		if !e {
			return notExplained
		}
		return fmt.Sprintf("%s cannot be changed: %s", name, why)
	}
	if auth {
		if _, reason := parseCredentials(value); reason != "" {
			return reason
		}
	}
	key := nameKey(name)
	if i, ok := b.findName(name, key); ok {
		sep := ", "
		if auth {
			sep = " "
		}
		if !b.join(i, sep, value) {
			if !e {
				return notExplained
			}
			return fmt.Sprintf("the value of %s would pass %d bytes", name, MaxHeaderValueBytes)
		}
		return ""
	}
	if len(b.headers) == MaxHeadersPerBlock {
		return e.num("more than %d headers in one block", MaxHeadersPerBlock)
	}
	if _, taken := b.names[key]; !taken {
		b.names[key] = len(b.headers)
	}
	b.headers = append(b.headers, Header{Name: name, Value: value})
	return ""
}

// hasCRLFNUL tells whether s holds a CR, an LF or a NUL, which no header
// value may.
func hasCRLFNUL(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '\r' || c == '\n' || c == 0 {
			return true
		}
	}
	return false
}

// normalizeValue trims a value and writes its comma-separated parts with
// ", " between them, as Netlify's headers parser does. A value already
// written so (the usual case) is returned as is, without allocating.
func normalizeValue(v string) string {
	v = strings.TrimSpace(v)
	if !strings.Contains(v, ",") || isNormalized(v) {
		return v
	}
	var sb strings.Builder
	sb.Grow(len(v) + strings.Count(v, ","))
	first := true
	for part := range strings.SplitSeq(v, ",") {
		if !first {
			sb.WriteString(", ")
		}
		first = false
		sb.WriteString(strings.TrimSpace(part))
	}
	return sb.String()
}

// isNormalized tells whether normalizeValue would return v (trimmed) as
// it is: each comma is followed by one space, and no part has other white
// space around it.
func isNormalized(v string) bool {
	first := true
	for part := range strings.SplitSeq(v, ",") {
		if !first {
			if !strings.HasPrefix(part, " ") {
				return false
			}
			part = part[1:]
		}
		first = false
		if strings.TrimSpace(part) != part {
			return false
		}
	}
	return true
}

// tokenBytes are the bytes of an RFC 9110 token (a header name).
var tokenBytes = func() (t [256]bool) {
	for c := range 256 {
		t[c] = isNameByte(byte(c)) || strings.IndexByte("!#$%&'*+-.^`|~", byte(c)) >= 0
	}
	return t
}()

// validHeaderName tells an RFC 9110 token.
func validHeaderName(name string) bool {
	for i := 0; i < len(name); i++ {
		if !tokenBytes[name[i]] {
			return false
		}
	}
	return name != ""
}

// checkHeaderPattern validates a block's path; a non-empty reason says why
// it is not applied (written out when e is set). It reads the parts as
// compileHeaderPattern does, without compiling them (no allocation).
//
// A ":name" between two "*" ("/*/:lang/*") is refused: the text between
// two "*" is found where it first occurs (see matchHeaderPattern), which
// a ":name" in it would make a search with a wildcard, no longer linear
// in the path. Before the first "*" or after the last one it is fine.
func checkHeaderPattern(p string, e explain) string {
	if strings.ContainsAny(p, "\x00\r?#") {
		return "the path contains a query, a fragment or a control character"
	}
	star, placeholder := false, "" // a "*" seen; a ":name" after it
	for part := range strings.SplitSeq(p, "/") {
		part = strings.TrimRight(part, " \t")
		if reason := headerPartReason(part, e); reason != "" {
			return reason
		}
		switch {
		case strings.IndexByte(part, '*') >= 0:
			if placeholder != "" {
				return e.str(`a placeholder between two "*" (%s) is not supported`, placeholder)
			}
			star = true
		case star && placeholder == "" && part != "" && part[0] == ':':
			placeholder = part
		}
	}
	return ""
}

// headerPartReason says why a part of a _headers path (between slashes,
// trimmed) is not valid, or "" (written out when e is set).
func headerPartReason(part string, e explain) string {
	if part != "" && part[0] == ':' && !validName(part[1:]) {
		return e.str("invalid placeholder %s (letters, digits and _ only)", part)
	}
	return ""
}

// parseCredentials reads a Basic-Auth value: "user:pass" pairs separated
// by white space.
func parseCredentials(value string) ([]Credential, string) {
	var creds []Credential
	for _, pair := range strings.Fields(value) {
		user, pass, ok := strings.Cut(pair, ":")
		if !ok || user == "" {
			return nil, fmt.Sprintf("Basic-Auth wants user:password pairs, not %q", cutSecret(pair))
		}
		creds = append(creds, Credential{User: user, Password: pass})
	}
	return creds, ""
}

// cutSecret shows the start of a malformed credential, not all of it.
func cutSecret(s string) string {
	if len(s) > 3 {
		return s[:3] + "…"
	}
	return s
}
