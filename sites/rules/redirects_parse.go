package rules

import (
	"fmt"
	"strings"
)

// Redirect is one rule of _redirects: requests whose path matches From
// (and whose query has every Query condition) go To, with Status.
type Redirect struct {
	From   string       // path pattern: literal segments, ":name" (one segment), trailing "*"
	Query  []QueryMatch // "id=:id" / "a=b" conditions (all must be present)
	To     string       // path or absolute http(s) URL, with :splat / :name
	Status int          // 301 default; 200, 301, 302, 303, 307, 308, 404, 410
	Force  bool         // "!"
	Line   int
}

// QueryMatch is one query condition of a rule: the request's query must
// have Name; a Value ":x" binds the placeholder x to its value, any other
// Value must equal it (after unescaping).
type QueryMatch struct{ Name, Value string }

// DefaultStatus is the status of a rule that names none.
const DefaultStatus = 301

// supportedStatus tells the statuses a rule may have.
func supportedStatus(code int) bool {
	switch code {
	case 200, 301, 302, 303, 307, 308, 404, 410:
		return true
	}
	return false
}

// unsupportedConditions names Netlify's rule conditions sitedrop cannot
// evaluate, by their key as written in _redirects (case-insensitive).
var unsupportedConditions = map[string]string{
	"country":  "Country= conditions (redirect by country) are not supported",
	"language": "Language= conditions (redirect by language) are not supported",
	"role":     "Role= conditions (role-based access with Netlify Identity) are not supported",
	"cookie":   "Cookie= conditions are not supported",
	"sign":     "signed proxy rules (Sign=) are not supported",
	"signed":   "signed proxy rules (Sign=) are not supported",
}

// unsupportedCondition looks key up in unsupportedConditions, in any
// case (as strings.ToLower has it). An ASCII key is lower-cased on the
// stack, without allocating: every key of unsupportedConditions is at
// most maxConditionKey bytes (see TestUnsupportedCondition), so a longer
// one is none of them.
func unsupportedCondition(key string) (reason string, known bool) {
	if !isASCII(key) {
		reason, known = unsupportedConditions[strings.ToLower(key)]
		return reason, known
	}
	var buf [maxConditionKey]byte
	if len(key) > len(buf) {
		return "", false
	}
	lower := buf[:len(key)]
	for i := range len(key) {
		lower[i] = lowerASCII(key[i])
	}
	reason, known = unsupportedConditions[string(lower)]
	return reason, known
}

// maxConditionKey is the longest key of unsupportedConditions.
const maxConditionKey = 8

// ParseRedirects reads a _redirects file: one rule a line,
// `from [name=value …] to [status][!]`, blank lines and "#" comments
// (whole line or from a token starting with "#") skipped. Lines that are
// not applied come back as Warnings, in line order. It keeps at most
// MaxRedirectRules rules (see ParseRedirectsN).
func ParseRedirects(data []byte) ([]Redirect, []Warning) {
	return ParseRedirectsN(data, MaxRedirectRules)
}

// ParseRedirectsN is ParseRedirects keeping at most maxRules rules (at
// least one): the line of the next rule is a Warning and the rest of the
// file is not read, so the work is bounded by maxRules as well as by the
// input's length.
func ParseRedirectsN(data []byte, maxRules int) ([]Redirect, []Warning) {
	maxRules = max(maxRules, 1)
	var rules []Redirect
	warn := warnings{file: RedirectsFile}
	r := lineReader{data: data}
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
		if len(rules) == maxRules {
			warn.add(r.num, line, fmt.Sprintf("more than %d rules: this line and the rest are ignored", maxRules))
			break
		}
		rule, reason := parseRedirectLine(line, explain(!warn.full()))
		if reason != "" {
			warn.add(r.num, line, reason)
			continue
		}
		rule.Line = r.num
		rules = append(rules, rule)
	}
	return rules, warn.done()
}

// parseRedirectLine parses one non-comment line; a non-empty reason says
// why it is not a rule (written out when e is set).
func parseRedirectLine(line string, e explain) (Redirect, string) {
	var buf [8]string // the fields of a usual line, without allocating
	fields := buf[:0]
	for f := range strings.FieldsSeq(line) {
		if f[0] == '#' {
			break
		}
		fields = append(fields, f)
	}
	from, parts := fields[0], fields[1:]
	if isAbsoluteURL(from) {
		return Redirect{}, "host rules wait for custom domains"
	}
	if len(parts) == 0 {
		return Redirect{}, "missing destination path or URL"
	}
	var rule Redirect
	rule.From = from
	rule.Status = DefaultStatus
	if _, _, isStatus := parseStatus(parts[0]); isStatus {
		// A forward rule: "/admin/* 200" stands for "/admin/* /admin/:splat 200".
		rule.To = ""
	} else {
		to := -1
		for i, p := range parts {
			if p[0] == '/' || isAbsoluteURL(p) {
				to = i
				break
			}
		}
		if to < 0 {
			return Redirect{}, `the destination must start with "/", "http://" or "https://"`
		}
		for _, q := range parts[:to] {
			name, value, ok := strings.Cut(q, "=")
			if !ok || name == "" {
				return Redirect{}, e.str("query condition %q must be name=value", q)
			}
			rule.Query = append(rule.Query, QueryMatch{Name: name, Value: value})
		}
		rule.To = parts[to]
		parts = parts[to+1:]
	}
	if len(parts) > 0 && !strings.Contains(parts[0], "=") {
		status, force, ok := parseStatus(parts[0])
		if !ok {
			return Redirect{}, e.str("invalid status code %q", parts[0])
		}
		if !supportedStatus(status) {
			return Redirect{}, e.num("status %d is not supported (200, 301, 302, 303, 307, 308, 404, 410)", status)
		}
		rule.Status, rule.Force = status, force
		parts = parts[1:]
	}
	for _, c := range parts {
		key, _, ok := strings.Cut(c, "=")
		if !ok {
			return Redirect{}, e.str("unexpected %q after the status", c)
		}
		if reason, known := unsupportedCondition(key); known {
			return Redirect{}, reason
		}
		return Redirect{}, e.str("unknown condition %q", c)
	}
	if rule.To == "" {
		if !strings.HasSuffix(from, "/*") || rule.Status != 200 {
			return Redirect{}, `missing destination: only a "/path/* 200" rule may leave it out`
		}
		rule.To = strings.TrimSuffix(from, "*") + ":splat"
	}
	if _, reason := checkRedirectFrom(&rule, false, e); reason != "" {
		return Redirect{}, reason
	}
	return rule, ""
}

// checkRedirect validates a rule's parts; a non-empty reason says what is
// wrong. It is shared by ParseRedirects and CompileRedirects.
func checkRedirect(rule *Redirect) string {
	_, reason := checkRedirectFrom(rule, false, true)
	return reason
}

// checkRedirectFrom is checkRedirect that returns the rule's From
// compiled too, with its segments when keep is set (CompileRedirects
// checks and compiles each From in one pass); the reason is written out
// when e is set.
func checkRedirectFrom(rule *Redirect, keep bool, e explain) (fromPattern, string) {
	fp, reason := compileFrom(rule.From, keep, e)
	if reason == "" {
		reason = checkRedirectRest(rule, e)
	}
	return fp, reason
}

// checkRedirectRest is checkRedirectFrom past the From.
func checkRedirectRest(rule *Redirect, e explain) string {
	if !supportedStatus(rule.Status) {
		return e.num("status %d is not supported (200, 301, 302, 303, 307, 308, 404, 410)", rule.Status)
	}
	if len(rule.To) == 0 || !(rule.To[0] == '/' || isAbsoluteURL(rule.To)) {
		return `the destination must start with "/", "http://" or "https://"`
	}
	if hasSpaceOrControl(rule.To) {
		return "the destination contains white space or control characters"
	}
	if isAbsoluteURL(rule.To) {
		switch rule.Status {
		case 200:
			return "proxying to another origin is not supported"
		case 404, 410:
			return e.num("a %d rule must name a page of this site, not a URL", rule.Status)
		}
		if !validHost(rule.To) {
			return "the destination URL has no valid host"
		}
	} else if strings.HasPrefix(rule.To, "//") {
		return "the destination must be a path of this site or an http(s) URL"
	}
	binds := strings.Count(rule.From, "/:")
	for _, q := range rule.Query {
		if strings.HasPrefix(q.Value, ":") {
			binds++
		}
	}
	if binds > MaxPlaceholders {
		return e.num("more than %d placeholders", MaxPlaceholders)
	}
	if targetPlaceholders(rule.To) > MaxTargetPlaceholders {
		return e.num("the destination uses :placeholders more than %d times", MaxTargetPlaceholders)
	}
	return ""
}

// targetPlaceholders counts the ":name" in a rule's To (bound or not,
// up to one past MaxTargetPlaceholders): each bound one is replaced by
// up to a whole request path.
func targetPlaceholders(to string) int {
	n := 0
	for n <= MaxTargetPlaceholders {
		i := strings.IndexByte(to, ':')
		if i < 0 {
			break
		}
		j := i + 1
		for j < len(to) && isNameByte(to[j]) {
			j++
		}
		if j > i+1 {
			n++
		}
		to = to[j:]
	}
	return n
}

// parseStatus reads "301" or "301!"; ok is false when part is not a
// number of one to three digits (with an optional "!"). It reads the
// digits itself: strconv.Atoi would allocate an error for every part
// that is not a number, and most parts it sees are paths.
func parseStatus(part string) (status int, force, ok bool) {
	digits, force := strings.CutSuffix(part, "!")
	if len(digits) == 0 || len(digits) > 3 {
		return 0, false, false
	}
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		if c < '0' || c > '9' {
			return 0, false, false
		}
		status = status*10 + int(c-'0')
	}
	return status, force, true
}

// isAbsoluteURL tells an http(s) URL from a path.
func isAbsoluteURL(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}

// validHost tells whether an absolute URL names a host: something
// between "//" and the next "/", "?" or "#", without white space or "@".
func validHost(u string) bool {
	_, rest, _ := strings.Cut(u, "//")
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	host := rest[:end]
	return host != "" && host[0] != ':' && !strings.ContainsAny(host, "@\\")
}
