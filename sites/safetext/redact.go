package safetext

import (
	"net/url"
	"strings"
)

// Redacted replaces secret query values in logged URLs.
const Redacted = "REDACTED"

// redactDepth is how many URLs deep, one inside another's query value,
// RedactQuery and RedactURL look.
const redactDepth = 3

// RedactURL is the URL string s with the values of its secret query
// parameters (see RedactQuery) replaced by Redacted; the rest, fragment
// included, is kept byte for byte.
func RedactURL(s string) string {
	return redactURLDepth(s, redactDepth)
}

// redactURLDepth is RedactURL, looking into URLs in query values down to
// depth levels.
func redactURLDepth(s string, depth int) string {
	base, query, ok := strings.Cut(s, "?")
	if !ok {
		return s
	}
	query, frag, hasFrag := strings.Cut(query, "#")
	red := redactQueryDepth(query, depth)
	if red == query {
		return s
	}
	out := base + "?" + red
	if hasFrag {
		out += "#" + frag
	}
	return out
}

// RedactQuery replaces the values of secret parameters (SecretParam) in a
// raw query with Redacted, leaving everything else byte for byte. A value
// that is itself a URL with a query (the sign-in page's
// next=/claim/<slug>?token=...) is redacted the same way, a few levels
// deep. A query with nothing to redact is returned as is.
func RedactQuery(raw string) string {
	return redactQueryDepth(raw, redactDepth)
}

// redactQueryDepth is RedactQuery, looking into URLs in values down to
// depth levels.
func redactQueryDepth(raw string, depth int) string {
	if raw == "" {
		return raw
	}
	parts := strings.Split(raw, "&")
	changed := false
	for i, p := range parts {
		name, _, _ := strings.Cut(p, "=")
		key, err := url.QueryUnescape(name)
		if err != nil {
			key = name
		}
		if SecretParam(key) {
			parts[i] = name + "=" + Redacted
			changed = true
			continue
		}
		val, hasVal := strings.CutPrefix(p, name+"=")
		if !hasVal || depth == 0 {
			continue
		}
		if inner, err := url.QueryUnescape(val); err == nil {
			if red := redactURLDepth(inner, depth-1); red != inner {
				parts[i] = name + "=" + url.QueryEscape(red)
				changed = true
			}
		}
	}
	if !changed {
		return raw
	}
	return strings.Join(parts, "&")
}

// Names of query parameters that carry secrets: exact names, and parts of
// names.
var (
	secretParamNames = map[string]bool{
		"code": true, "key": true, "otp": true, "pin": true, "auth": true, "sig": true,
		"signature": true, "session": true, "pass": true, "pwd": true, "hash": true,
	}
	secretParamParts = []string{"token", "secret", "password", "passwd", "apikey", "api_key", "api-key"}
)

// SecretParam reports whether a query parameter's value is a secret: its
// name (any case) is one of a few known ones (code, key, otp, session...)
// or holds token, secret, password or an API key's name.
func SecretParam(name string) bool {
	n := strings.ToLower(name)
	if secretParamNames[n] {
		return true
	}
	for _, p := range secretParamParts {
		if strings.Contains(n, p) {
			return true
		}
	}
	return false
}
