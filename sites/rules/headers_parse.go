package rules

import (
	"fmt"
	"strings"
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
// case), and why.
func reservedHeader(name string) (why string, reserved bool) {
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

// ParseHeaders reads a _headers file: a line starting with "/" opens a
// block for that path pattern, the lines after it are "Name: value"
// headers of that block; blank lines and "#" comments are skipped. A
// block that sets nothing is dropped. Lines not applied come back as
// Warnings.
func ParseHeaders(data []byte) ([]HeaderRule, []Warning) {
	var rules []HeaderRule
	warn := warnings{file: HeadersFile}
	r := lineReader{data: data}
	var cur *HeaderRule // the open block, nil before the first path
	skipBlock := false  // the open block is past a limit
	flush := func() {
		if cur != nil && len(cur.Headers) > 0 {
			rules = append(rules, *cur)
		}
		cur = nil
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
			if reason := checkHeaderPattern(line); reason != "" {
				warn.add(r.num, line, reason)
				skipBlock = true
				continue
			}
			cur, skipBlock = &HeaderRule{Pattern: line, Line: r.num}, false
			continue
		}
		if skipBlock {
			warn.add(r.num, line, "the path of this block was not applied")
			continue
		}
		if cur == nil {
			warn.add(r.num, line, `a path line ("/…") must come before the headers`)
			continue
		}
		if reason := cur.addLine(line); reason != "" {
			if name, _, _ := strings.Cut(line, ":"); strings.EqualFold(strings.TrimSpace(name), BasicAuthHeader) {
				line = BasicAuthHeader + ": (credentials hidden)"
			}
			warn.add(r.num, line, reason)
		}
	}
	flush()
	return rules, warn.done()
}

// addLine adds a "Name: value" line to the block; a non-empty reason says
// why it was not.
func (h *HeaderRule) addLine(line string) string {
	if isAbsoluteURL(line) {
		return "host rules wait for custom domains"
	}
	rawName, rawValue, ok := strings.Cut(line, ":")
	if !ok {
		return `not a "Name: value" header line`
	}
	name, value := strings.TrimSpace(rawName), normalizeValue(rawValue)
	if strings.EqualFold(name, BasicAuthHeader) {
		value = strings.TrimSpace(rawValue) // passwords may hold commas
	}
	if name == "" {
		return "missing header name"
	}
	if !validHeaderName(name) {
		return fmt.Sprintf("invalid header name %q", name)
	}
	if value == "" {
		return "missing header value"
	}
	if strings.ContainsAny(value, "\x00\r\n") {
		return "the value contains a control character (CR, LF or NUL)"
	}
	if why, ok := reservedHeader(name); ok {
		return fmt.Sprintf("%s cannot be changed: %s", name, why)
	}
	if strings.EqualFold(name, BasicAuthHeader) {
		if _, reason := parseCredentials(value); reason != "" {
			return reason
		}
	}
	for i := range h.Headers {
		if strings.EqualFold(h.Headers[i].Name, name) {
			joined := h.Headers[i].Value + ", " + value
			if strings.EqualFold(name, BasicAuthHeader) {
				joined = h.Headers[i].Value + " " + value
			}
			if len(joined) > MaxHeaderValueBytes {
				return fmt.Sprintf("the value of %s would pass %d bytes", name, MaxHeaderValueBytes)
			}
			h.Headers[i].Value = joined
			return ""
		}
	}
	if len(h.Headers) == MaxHeadersPerBlock {
		return fmt.Sprintf("more than %d headers in one block", MaxHeadersPerBlock)
	}
	h.Headers = append(h.Headers, Header{Name: name, Value: value})
	return ""
}

// normalizeValue trims a value and writes its comma-separated parts with
// ", " between them, as Netlify's headers parser does.
func normalizeValue(v string) string {
	v = strings.TrimSpace(v)
	if !strings.Contains(v, ",") {
		return v
	}
	parts := strings.Split(v, ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return strings.Join(parts, ", ")
}

// validHeaderName tells an RFC 9110 token.
func validHeaderName(name string) bool {
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !isNameByte(c) && !strings.ContainsRune("!#$%&'*+-.^`|~", rune(c)) {
			return false
		}
	}
	return name != ""
}

// checkHeaderPattern validates a block's path; a non-empty reason says why
// it is not applied.
func checkHeaderPattern(p string) string {
	if strings.ContainsAny(p, "\x00\r?#") {
		return "the path contains a query, a fragment or a control character"
	}
	if _, reason := compileHeaderPattern(p); reason != "" {
		return reason
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
