package sites

import (
	"fmt"
	"strconv"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites/accounts"
	"sitedrop/sites/rules"
)

// ParseRules parses the site's _redirects and _headers (files at the
// root, kept in the manifest like any file so that each version has its
// own) and returns the _redirects rules, for the deploy's quality report
// (sites/report resolves links through them), and the lines that will
// not be applied, for the deploy's answer. A site without them has none
// (warnings is empty, not nil). It applies no plan's limit: a deploy
// calls CheckRules. The serving side parses the same bytes again when it
// loads the site (within MaxRuleLimit).
func ParseRules(files []File) (redirects []rules.Redirect, warnings []rules.Warning) {
	warnings = []rules.Warning{}
	for _, f := range files {
		switch f.Path {
		case rules.RedirectsFile:
			rs, w := rules.ParseRedirects(f.Data)
			redirects = rs
			warnings = append(warnings, w...)
		case rules.HeadersFile:
			_, w := rules.ParseHeaders(f.Data)
			warnings = append(warnings, w...)
		}
	}
	return redirects, warnings
}

// The rule limits of each kind of site: the redirect rules of _redirects
// and the path blocks of _headers together, and the two files' bytes
// together. They bound what a site's rules cost: to compile (once per
// distinct rule set while the site server's rule cache keeps it; at the
// largest limit at most about 20 ms of CPU, whatever the 2 MiB hold: 11
// to 13 ms for 20,000 rules or a _headers of 1,000 blocks, 15 to 21 ms
// for the files of 2 MiB that cost the most, by sites/serve's
// BenchmarkCompileRules, cpu-ms/op; parsing is linear in the files), to
// hold while it is cached (about 200 bytes a rule besides its text:
// 20,000 rules of a 1.8 MB file hold 6 MiB, which the rule cache counts
// as 7), and to match (a rule that starts with a placeholder is tried on
// every request its path could match).
const (
	AnonRules     = 1_000
	AnonRuleBytes = 128 << 10
	FreeRules     = 10_000
	FreeRuleBytes = 1 << 20
	ProRules      = 20_000
	ProRuleBytes  = 2 << 20
)

// RuleLimit bounds a site's rule files (_redirects and _headers).
type RuleLimit struct {
	// Rules counts the rules of _redirects and the blocks of _headers
	// together.
	Rules int
	// Bytes is the size of the two files together.
	Bytes int64
	// who names the sites the limit applies to, in a refusal.
	who string
}

// RuleLimitOf is the rule limit of a site owned by owner: the owner's
// plan's, or the anonymous one's (lower) when owner is nil.
func RuleLimitOf(owner *core.Record) RuleLimit {
	switch {
	case owner == nil:
		return RuleLimit{Rules: AnonRules, Bytes: AnonRuleBytes, who: "an anonymous site"}
	case accounts.UserOf(owner).Plan() == PlanPro:
		return MaxRuleLimit()
	}
	return RuleLimit{Rules: FreeRules, Bytes: FreeRuleBytes, who: "a site of the free plan"}
}

// MaxRuleLimit is the largest rule limit of any plan: what the site
// server reads of a site's rule files, whatever their age (a version
// deployed before the limits, or under a plan the owner has left).
func MaxRuleLimit() RuleLimit {
	return RuleLimit{Rules: ProRules, Bytes: ProRuleBytes, who: "a site of the pro plan"}
}

// RuleLimitError is a deploy whose rule files pass its RuleLimit: the
// API answers 400 with Msg, which names the limit.
type RuleLimitError struct{ Msg string }

// Error is the refusal, as the API answers it.
func (e *RuleLimitError) Error() string { return e.Msg }

// CheckRules is ParseRules for a deploy: it refuses, with a
// *RuleLimitError, rule files larger than limit allows or holding more
// rules, and otherwise returns what ParseRules returns. The size is
// checked before anything is parsed, and the parse stops one rule past
// the limit, so a refusal costs little.
func CheckRules(files []File, limit RuleLimit) (redirects []rules.Redirect, warnings []rules.Warning, err error) {
	var size int64
	for _, f := range files {
		if f.Path == rules.RedirectsFile || f.Path == rules.HeadersFile {
			size += int64(len(f.Data))
		}
	}
	if size > limit.Bytes {
		return nil, nil, &RuleLimitError{Msg: fmt.Sprintf(
			"Rule files too large: _redirects and _headers are %s bytes together; %s may have %s",
			FormatCount(size), limit.who, FormatBytes(limit.Bytes))}
	}
	warnings = []rules.Warning{}
	n, over := 0, false
	for _, f := range files {
		switch f.Path {
		case rules.RedirectsFile:
			rs, w := rules.ParseRedirectsN(f.Data, limit.Rules+1)
			redirects, over = rs, len(rs) > limit.Rules
			n += len(rs)
			warnings = append(warnings, w...)
		case rules.HeadersFile:
			hs, w := rules.ParseHeaders(f.Data)
			n += len(hs)
			warnings = append(warnings, w...)
		}
	}
	if n > limit.Rules {
		count := FormatCount(int64(n))
		if over { // the parse stopped there
			count = "more than " + FormatCount(int64(limit.Rules))
		}
		return nil, nil, &RuleLimitError{Msg: fmt.Sprintf(
			"Too many rules: _redirects and _headers hold %s rules and header blocks together; %s may have %s",
			count, limit.who, FormatCount(int64(limit.Rules)))}
	}
	return redirects, warnings, nil
}

// FormatCount writes n with a comma between groups of three digits.
func FormatCount(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := ""
	if n < 0 {
		neg, s = "-", s[1:]
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return neg + s
}
