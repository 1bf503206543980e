package domains_test

import (
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"sitedrop/sites/domains"
)

func TestNormalize(t *testing.T) {
	t.Parallel()
	scenarios := []struct {
		name, in, want string
		err            error
	}{
		{"subdomain", "Shop.Example.COM", "shop.example.com", nil},
		{"apex with trailing dot and spaces", " example.com. ", "example.com", nil},
		{"idn", "bücher.example", "xn--bcher-kva.example", nil},
		{"idn apex", "Bücher.de", "xn--bcher-kva.de", nil},
		{"registrable under a two-label suffix", "shop.example.co.uk", "shop.example.co.uk", nil},
		{"empty", "  ", "", domains.ErrEmpty},
		{"ipv4", "192.0.2.1", "", domains.ErrIP},
		{"ipv6", "[2001:db8::1]", "", domains.ErrIP},
		{"single label", "localhost", "", domains.ErrNotDomain},
		{"public suffix", "co.uk", "", domains.ErrSuffix},
		{"tld", "com.", "", domains.ErrNotDomain},
		{"underscore", "a_b.example.com", "", domains.ErrNotDomain},
		{"scheme", "https://example.com", "", domains.ErrNotDomain},
		{"port", "example.com:8080", "", domains.ErrNotDomain},
		{"path", "example.com/x", "", domains.ErrNotDomain},
		{"empty label", "a..example.com", "", domains.ErrNotDomain},
		{"leading hyphen", "-a.example.com", "", domains.ErrNotDomain},
		{"label too long", strings.Repeat("a", 64) + ".example.com", "", domains.ErrNotDomain},
		{"invalid utf-8", "\xf70.example", "", domains.ErrNotDomain},
		{"numeric tld", "example.123", "", domains.ErrNotDomain},
		{"punycode that decodes to nothing valid", "xn--0-p10i.example", "", domains.ErrNotDomain},
		{"too long", strings.Repeat("abcdefghi.", 24) + "example.com", "", domains.ErrTooLong},
	}
	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) {
			got, err := domains.Normalize(s.in)
			if got != s.want || !errors.Is(err, s.err) {
				t.Fatalf("Normalize(%q) = %q, %v; want %q, %v", s.in, got, err, s.want, s.err)
			}
		})
	}
}

func TestRulesCheck(t *testing.T) {
	t.Parallel()
	r := domains.Rules{WebHost: "drop.example.com", SitesDomain: "example.site"}
	scenarios := []struct {
		in string
		ok bool
	}{
		{"drop.example.com", false},
		{"www.drop.example.com", false},
		{"example.site", false},
		{"alice.example.site", false},
		{"example.com", true},
		{"shop.example.com", true},
		{"notexample.site", true},
	}
	for _, s := range scenarios {
		if err := r.Check(s.in); (err == nil) != s.ok {
			t.Errorf("Check(%q) = %v, want ok %v", s.in, err, s.ok)
		}
	}
}

func TestRecords(t *testing.T) {
	t.Parallel()
	addrs := []netip.Addr{netip.MustParseAddr("192.0.2.7"), netip.MustParseAddr("2001:db8::7")}
	got := domains.Records("shop.example.com", "tok", "alice.sites.test", addrs)
	want := []domains.Record{
		{Type: "CNAME", Name: "shop.example.com", Value: "alice.sites.test"},
		{Type: "TXT", Name: "_sitedrop-challenge.shop.example.com", Value: "tok"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("subdomain records = %v", got)
	}
	got = domains.Records("example.co.uk", "tok", "alice.sites.test", addrs)
	want = []domains.Record{
		{Type: "A", Name: "example.co.uk", Value: "192.0.2.7"},
		{Type: "AAAA", Name: "example.co.uk", Value: "2001:db8::7"},
		{Type: "TXT", Name: "_sitedrop-challenge.example.co.uk", Value: "tok"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("apex records = %v", got)
	}
	if a, ok := domains.WWWApex("www.example.com"); !ok || a != "example.com" {
		t.Errorf("WWWApex = %q %v", a, ok)
	}
	if _, ok := domains.WWWApex("www.shop.example.com"); ok {
		t.Error("www of a subdomain is not an apex's www")
	}
}

// TestBackoff: the check made when a claim starts is followed by the
// job's next run, then by waits doubling from a minute, at most an hour.
func TestBackoff(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]string{0: "0s", 1: "0s", 2: "1m0s", 3: "2m0s", 6: "16m0s", 7: "32m0s", 8: "1h0m0s", 30: "1h0m0s"} {
		if got := domains.Backoff(n).String(); got != want {
			t.Errorf("Backoff(%d) = %s, want %s", n, got, want)
		}
	}
}
