package sites

import (
	"errors"
	"strings"
	"testing"
)

// TestNormalizeBlock: each kind's values are read in the form they are
// matched in, and a malformed one is a *FieldError naming the field.
func TestNormalizeBlock(t *testing.T) {
	h := strings.Repeat("ab", 32)
	for _, c := range []struct{ kind, in, want, field string }{
		{BlockContentHash, " " + strings.ToUpper(h) + " ", h, ""},
		{BlockContentHash, "abc", "", "value"},
		{BlockRedirectTarget, "Evil.Example", "evil.example", ""},
		{BlockRedirectTarget, "https://evil.example/", "evil.example", ""},
		{BlockRedirectTarget, "http://EVIL.example:8080/login", "evil.example/login", ""},
		{BlockRedirectTarget, "//*.evil.example", "*.evil.example", ""},
		{BlockRedirectTarget, "*.evil.example/a/b", "*.evil.example/a/b", ""},
		{BlockRedirectTarget, "203.0.113.7", "203.0.113.7", ""},
		{BlockRedirectTarget, "[2001:db8::1]/x", "2001:db8::1/x", ""},
		{BlockRedirectTarget, "ftp://evil.example", "", "value"},
		{BlockRedirectTarget, "evil..example", "", "value"},
		{BlockRedirectTarget, "evil.example/a b", "", "value"},
		{BlockRedirectTarget, "*", "", "value"},
		{BlockEmailDomain, "@Mail.Example", "mail.example", ""},
		{BlockEmailDomain, "a@mail.example", "", "value"},
		{"ip", "x", "", "kind"},
	} {
		got, err := NormalizeBlock(c.kind, c.in)
		var fe *FieldError
		switch {
		case c.field == "" && (err != nil || got != c.want):
			t.Errorf("%s %q: %q, %v; want %q", c.kind, c.in, got, err, c.want)
		case c.field != "" && (!errors.As(err, &fe) || fe.Field != c.field):
			t.Errorf("%s %q: %q, %v; want a refusal of %s", c.kind, c.in, got, err, c.field)
		}
	}
}

// TestTargetBlocked: a host pattern matches its host and the hosts under
// it, "*." only those under it, a path pattern its prefix; relative
// targets and look-alike hosts never match.
func TestTargetBlocked(t *testing.T) {
	set := &blockSet{}
	for _, v := range []string{"evil.example", "*.cdn.example", "share.example/phish"} {
		p, err := parseTargetPattern(v)
		if err != nil {
			t.Fatal(err)
		}
		set.targets = append(set.targets, p)
	}
	for target, want := range map[string]bool{
		"https://evil.example/":             true,
		"http://EVIL.example.:80/x":         true,
		"https://a.b.evil.example/login":    true,
		"//evil.example/x":                  true,
		"https://user@evil.example/":        true,
		"https://evil.example@good.example": false, // user info, not the host
		"https://notevil.example/":          false,
		"https://evil.example.org/":         false,
		"/evil.example":                     false,
		"evil.example":                      false, // a relative path
		"https://cdn.example/":              false,
		"https://x.cdn.example/a":           true,
		"https://share.example/phish/a":     true,
		"https://share.example/phishing":    true, // a prefix, as written
		"https://share.example/docs":        false,
		"https://share.example":             false,
	} {
		if got := set.targetBlocked(target); got != want {
			t.Errorf("%s: blocked %v, want %v", target, got, want)
		}
	}
}

// TestCheckSignup: a blocked domain refuses its addresses and those of
// the domains under it, not those of look-alikes.
func TestCheckSignup(t *testing.T) {
	b := &Blocklist{}
	b.cur.Store(&blockSet{domains: map[string]bool{"spam.example": true}})
	for email, want := range map[string]bool{
		"a@spam.example":     true,
		"a@mx.spam.example":  true,
		"a@notspam.example":  false,
		"a@spam.example.org": false,
		"a@example":          false,
	} {
		err := b.CheckSignup(email)
		var be *BlockedEmailDomainError
		if got := errors.As(err, &be); got != want {
			t.Errorf("%s: %v, want blocked %v", email, err, want)
		}
	}
	var none *Blocklist
	if none.CheckSignup("a@spam.example") != nil || none.HashBlocked("x") || none.TargetBlocked("https://x/") {
		t.Error("a nil blocklist blocks")
	}
}
