package safetext

import (
	"net/url"
	"testing"
)

func TestRedactQuery(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"a=1&b=2", "a=1&b=2"},
		{"token=x", "token=REDACTED"},
		{"token", "token=REDACTED"},
		{"%74oken=x&a=%20", "%74oken=REDACTED&a=%20"}, // an escaped name
		{"a=1&&Claim_Token=x&next=%2F", "a=1&&Claim_Token=REDACTED&next=%2F"},
		{"x-api-key=1&access_token=2&keyboard=3", "x-api-key=REDACTED&access_token=REDACTED&keyboard=3"},
		{"bad%zz=1&code=2", "bad%zz=1&code=REDACTED"},
		// a URL in a value (the sign-in page's next= back to a claim page)
		{"next=" + url.QueryEscape("/claim/anon-site?token=SECRET"), "next=" + url.QueryEscape("/claim/anon-site?token=REDACTED")},
		{"next=" + url.QueryEscape("/auth/login?next="+url.QueryEscape("/claim/x?token=S")), "next=" + url.QueryEscape("/auth/login?next="+url.QueryEscape("/claim/x?token=REDACTED"))},
		{"next=" + url.QueryEscape("/account?tab=keys"), "next=" + url.QueryEscape("/account?tab=keys")},
	} {
		if got := RedactQuery(c.in); got != c.want {
			t.Errorf("RedactQuery(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := RedactURL("https://web.test/claim/x?token=1#top"); got != "https://web.test/claim/x?token=REDACTED#top" {
		t.Errorf("redactURL: %q", got)
	}
}
