package analytics

import (
	"bytes"
)

// botMarks are the user-agent substrings (lower case) of clients that say
// they are bots: crawlers, link previews, monitors and HTTP libraries.
var botMarks = []string{
	"bot", "crawl", "spider", "slurp", "archiver", "facebookexternalhit",
	"preview", "monitor", "headlesschrome", "lighthouse", "curl/", "wget/",
	"python-", "go-http-client", "java/", "okhttp", "libwww", "httpclient",
}

// botMarkBytes are botMarks as byte slices, for bytes.Contains.
var botMarkBytes = func() [][]byte {
	out := make([][]byte, len(botMarks))
	for i, m := range botMarks {
		out[i] = []byte(m)
	}
	return out
}()

// IsBot reports whether ua says it is a bot (see botMarks); an empty user
// agent counts as one. It does not allocate: the first 512 bytes of ua are
// lower-cased on the stack, then searched.
func IsBot(ua string) bool {
	if ua == "" {
		return true
	}
	var buf [512]byte
	n := copy(buf[:], ua)
	for i, c := range buf[:n] {
		if 'A' <= c && c <= 'Z' {
			buf[i] = c + 'a' - 'A'
		}
	}
	lower := buf[:n]
	for _, m := range botMarkBytes {
		if bytes.Contains(lower, m) {
			return true
		}
	}
	return false
}

// ReferrerHost is the host of the Referer header ref (never its path or
// query), in lower case and without a port or "www."; empty when ref is
// not an http(s) URL or names siteHost (the site's own pages). It
// allocates only for a host with upper-case letters.
func ReferrerHost(ref, siteHost string) string {
	rest, ok := cutPrefixFold(ref, "https://")
	if !ok {
		if rest, ok = cutPrefixFold(ref, "http://"); !ok {
			return ""
		}
	}
	end := len(rest)
	for i := 0; i < len(rest); i++ {
		if c := rest[i]; c == '/' || c == '?' || c == '#' {
			end = i
			break
		}
	}
	host := rest[:end]
	for i := len(host) - 1; i >= 0; i-- { // drop userinfo
		if host[i] == '@' {
			host = host[i+1:]
			break
		}
	}
	host = hostOnly(host)
	if host == "" || len(host) > 253 {
		return ""
	}
	if equalFold(host, hostOnly(siteHost)) {
		return ""
	}
	host = toLower(host)
	if len(host) > 4 && host[:4] == "www." {
		host = host[4:]
	}
	return host
}

func cutPrefixFold(s, lower string) (string, bool) {
	if len(s) < len(lower) || !equalFold(s[:len(lower)], lower) {
		return s, false
	}
	return s[len(lower):], true
}

// equalFold is strings.EqualFold for ASCII.
func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// toLower lower-cases ASCII, allocating only when s has upper case.
func toLower(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
