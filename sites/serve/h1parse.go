package serve

import (
	"bytes"
	"net/textproto"
)

// The HTTP/1.1 fast path's request-head parser (see HTTP1).
//
// It is strict on purpose: it accepts only what it fully understands, and
// everything it accepts net/http reads alike (FuzzH1Parse checks it
// against http.ReadRequest). A GET or HEAD in origin-form, HTTP/1.1 or
// HTTP/1.0, header fields "token: value" each ended by CRLF, exactly one
// Host, no body (Content-Length absent or "0", no Transfer-Encoding),
// no Expect, no Upgrade, and Connection naming only close or
// keep-alive. Anything else (another method, absolute- or
// asterisk-form, an HTTP/2 preface, a bare LF or CR, obs-fold, a control
// byte in a value, a space before a colon, a head over the limit, too
// many fields) is not an error here: the connection goes to net/http,
// which answers as it always did, from that request on. So no request's
// end is ever decided by two parsers: the fast path never reads a body,
// and a head it accepts ends where net/http's would.

const (
	// h1MaxHead is the longest head the fast path reads; a longer one
	// (net/http allows 1 MiB) goes to net/http.
	h1MaxHead = 16 << 10
	// h1MaxFields is the most header fields (Host included) it reads.
	h1MaxFields = 64
)

// h1Field is a header field of a parsed head: its canonical name
// (net/http's, see textproto.CanonicalMIMEHeaderKey) and its value, with
// the optional whitespace around it trimmed.
type h1Field struct {
	name  string
	value []byte
}

// h1Head is a parsed request head. Its byte slices point into the buffer
// it was parsed from.
type h1Head struct {
	// head: the method is HEAD (else GET).
	head bool
	// http10: the version is HTTP/1.0 (else HTTP/1.1).
	http10 bool
	// close: the connection closes after the answer (HTTP/1.0, or
	// Connection: close).
	close  bool
	target []byte
	host   []byte
	// fields are the header fields but Host, in order.
	fields [h1MaxFields]h1Field
	n      int
	// size is the head's length, its blank line included.
	size int
}

// h1Result is what parseH1 made of a buffer.
type h1Result uint8

const (
	// h1Done: a complete head, parsed.
	h1Done h1Result = iota
	// h1More: a valid beginning of a head; read more.
	h1More
	// h1Handoff: not a head the fast path answers: net/http's.
	h1Handoff
)

// parseH1 parses the request head at the start of b into h.
func parseH1(b []byte, h *h1Head) h1Result {
	h.head, h.http10, h.close, h.target, h.host, h.n, h.size = false, false, false, nil, nil, 0, 0
	var rest []byte
	switch {
	case bytes.HasPrefix(b, methodGet):
		rest = b[len(methodGet):]
	case bytes.HasPrefix(b, methodHead):
		h.head, rest = true, b[len(methodHead):]
	case len(b) < len(methodHead) && (bytes.HasPrefix(methodGet, b) || bytes.HasPrefix(methodHead, b)):
		return h1More
	default:
		return h1Handoff
	}
	// the request line: origin-form SP version CRLF
	i := 0
	for ; i < len(rest) && targetByte[rest[i]]; i++ {
	}
	if i == len(rest) {
		return h1MoreUnder(b)
	}
	if i == 0 || rest[0] != '/' || rest[i] != ' ' || !validEscapes(rest[:i]) {
		return h1Handoff
	}
	h.target = rest[:i]
	rest = rest[i+1:]
	const version = len("HTTP/1.1\r\n")
	if len(rest) < version {
		if bytes.HasPrefix(http11CRLF, rest) || bytes.HasPrefix(http10CRLF, rest) {
			return h1MoreUnder(b)
		}
		return h1Handoff
	}
	switch {
	case bytes.HasPrefix(rest, http11CRLF):
	case bytes.HasPrefix(rest, http10CRLF):
		h.http10, h.close = true, true
	default:
		return h1Handoff
	}
	rest = rest[version:]
	hosts, lengths := 0, 0
	for {
		if len(rest) < 2 {
			if len(rest) == 0 || rest[0] == '\r' {
				return h1MoreUnder(b)
			}
		}
		if rest[0] == '\r' {
			if rest[1] != '\n' {
				return h1Handoff
			}
			h.size = len(b) - len(rest) + 2
			break
		}
		// name ":" OWS value OWS CRLF
		j := 0
		for ; j < len(rest) && tokenByte[rest[j]]; j++ {
		}
		if j == len(rest) {
			return h1MoreUnder(b)
		}
		if j == 0 || rest[j] != ':' {
			return h1Handoff // obs-fold, a space before the colon, a bad name
		}
		name := rest[:j]
		k := j + 1
		for ; k < len(rest) && valueByte[rest[k]]; k++ {
		}
		if k == len(rest) {
			return h1MoreUnder(b)
		}
		if rest[k] != '\r' {
			return h1Handoff // a bare LF or a control byte
		}
		if k+1 == len(rest) {
			return h1MoreUnder(b)
		}
		if rest[k+1] != '\n' {
			return h1Handoff // a bare CR
		}
		value := trimOWS(rest[j+1 : k])
		rest = rest[k+2:]
		key := canonicalKey(name)
		switch key {
		case "Host":
			hosts++
			h.host = value
			continue
		case "Content-Length":
			lengths++
			if lengths > 1 || len(value) != 1 || value[0] != '0' {
				return h1Handoff // a body, or lengths to compare
			}
		case "Transfer-Encoding", "Expect", "Upgrade":
			return h1Handoff
		case "Connection":
			if !connectionTokens(value, h) {
				return h1Handoff
			}
		}
		if h.n == len(h.fields) {
			return h1Handoff
		}
		h.fields[h.n] = h1Field{name: key, value: value}
		h.n++
	}
	if h.size > h1MaxHead {
		return h1Handoff
	}
	if hosts != 1 || !validHost(h.host) {
		return h1Handoff // net/http answers a missing or repeated Host (or lets HTTP/1.0 go without)
	}
	return h1Done
}

// h1MoreUnder asks for more of a head that may still fit the limit.
func h1MoreUnder(b []byte) h1Result {
	if len(b) >= h1MaxHead {
		return h1Handoff
	}
	return h1More
}

var (
	methodGet  = []byte("GET ")
	methodHead = []byte("HEAD ")
	http11CRLF = []byte("HTTP/1.1\r\n")
	http10CRLF = []byte("HTTP/1.0\r\n")
)

// connectionTokens reads a Connection value: only close and keep-alive
// are understood (net/http's keep-alive of HTTP/1.0 is left to it).
func connectionTokens(v []byte, h *h1Head) bool {
	for len(v) > 0 {
		var tok []byte
		if i := bytes.IndexByte(v, ','); i >= 0 {
			tok, v = v[:i], v[i+1:]
		} else {
			tok, v = v, nil
		}
		tok = trimOWS(tok)
		switch {
		case len(tok) == 0:
		case asciiEqualFold(tok, "close"):
			h.close = true
		case asciiEqualFold(tok, "keep-alive") && !h.http10:
		default:
			return false
		}
	}
	return true
}

// asciiEqualFold reports whether b is s, ASCII case folded.
func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// trimOWS trims spaces and tabs around v.
func trimOWS(v []byte) []byte {
	for len(v) > 0 && (v[0] == ' ' || v[0] == '\t') {
		v = v[1:]
	}
	for len(v) > 0 && (v[len(v)-1] == ' ' || v[len(v)-1] == '\t') {
		v = v[:len(v)-1]
	}
	return v
}

// validEscapes reports whether every % in t starts a %XX escape (else
// net/http refuses the target).
func validEscapes(t []byte) bool {
	for i := 0; i < len(t); i++ {
		if t[i] == '%' {
			if i+2 >= len(t) || !isHex(t[i+1]) || !isHex(t[i+2]) {
				return false
			}
			i += 2
		}
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// validHost reports whether a Host value is one the fast path may take:
// a name or IPv4 address of letters, digits, '-' and '.', with an
// optional :port (a site host never is anything else; the rest goes to
// net/http, which checks it).
func validHost(h []byte) bool {
	if len(h) == 0 || len(h) > 255 {
		return false
	}
	colon := false
	for _, c := range h {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '.':
			if colon && !('0' <= c && c <= '9') {
				return false
			}
		case c == ':' && !colon:
			colon = true
		default:
			return false
		}
	}
	return true
}

// canonicalKey is net/http's canonical form of the header name b (a
// token): upper case at the start and after each '-', lower case
// elsewhere. Common names come from a table, without allocating.
func canonicalKey(b []byte) string {
	var buf [48]byte
	if len(b) > len(buf) {
		return textproto.CanonicalMIMEHeaderKey(string(b))
	}
	upper := true
	for i, c := range b {
		if upper && 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		} else if !upper && 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
		upper = c == '-'
	}
	if k, ok := commonKeys[string(buf[:len(b)])]; ok {
		return k
	}
	return string(buf[:len(b)])
}

// commonKeys are the header names browsers, crawlers and proxies send,
// canonical.
var commonKeys = func() map[string]string {
	m := map[string]string{}
	for _, k := range []string{
		"Accept", "Accept-Charset", "Accept-Encoding", "Accept-Language", "Authorization",
		"Cache-Control", "Cdn-Loop", "Connection", "Content-Length", "Content-Type", "Cookie", "Dnt", "Expect",
		"Forwarded", "From", "Host", "If-Match", "If-Modified-Since", "If-None-Match", "If-Range",
		"If-Unmodified-Since", "Keep-Alive", "Origin", "Pragma", "Priority", "Purpose", "Range", "Referer",
		"Sec-Ch-Ua", "Sec-Ch-Ua-Mobile", "Sec-Ch-Ua-Platform", "Sec-Fetch-Dest", "Sec-Fetch-Mode",
		"Sec-Fetch-Site", "Sec-Fetch-User", "Sec-Gpc", "Sec-Purpose", "Te", "Transfer-Encoding", "Upgrade",
		"Upgrade-Insecure-Requests", "User-Agent", "Via", "X-Forwarded-For", "X-Forwarded-Host",
		"X-Forwarded-Proto", "X-Real-Ip", "X-Requested-With",
	} {
		m[k] = k
	}
	return m
}()

// Byte classes of the parser.
var (
	// tokenByte: RFC 9110 tchar.
	tokenByte [256]bool
	// valueByte: a field value's bytes (HTAB, SP, VCHAR, obs-text).
	valueByte [256]bool
	// targetByte: an origin-form target's bytes (RFC 3986 pchar, "/",
	// "?", "%").
	targetByte [256]bool
)

func init() {
	for c := 0; c < 256; c++ {
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		tokenByte[c] = alnum || bytes.IndexByte([]byte("!#$%&'*+-.^_`|~"), byte(c)) >= 0
		valueByte[c] = c == '\t' || 0x20 <= c && c != 0x7f
		targetByte[c] = alnum || bytes.IndexByte([]byte("-._~!$&'()*+,;=:@/?%"), byte(c)) >= 0
	}
}
