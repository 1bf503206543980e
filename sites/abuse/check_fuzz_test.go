package abuse

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"sitedrop/sites"
)

// FuzzReportCheck: whatever a reporter sends, Check never panics, and a
// report it accepts is within every bound the collection holds (so the
// save cannot fail on a field's limits).
func FuzzReportCheck(f *testing.F) {
	f.Add("https://alice.sites.test/", "phishing", "details", "me@example.org")
	f.Add(" alice.sites.test ", "spam", "", "")
	f.Add("", "ugly", strings.Repeat("é", MaxDetails+1), "not-an-address")
	f.Add("x", "other", "\xff", "a@b")
	f.Fuzz(func(t *testing.T, u, reason, details, email string) {
		n := NewReport{URL: u, Reason: reason, Details: details, Email: email}
		if err := n.Check(); err != nil {
			return
		}
		if n.URL == "" || len(n.URL) > MaxURL || !slices.Contains(Reasons, n.Reason) ||
			!utf8.ValidString(n.Details) || utf8.RuneCountInString(n.Details) > MaxDetails || len(n.Email) > MaxEmail {
			t.Fatalf("accepted out of bounds: %+v", n)
		}
	})
}

// FuzzReportHost: any URL a reporter sends is read without a panic, and
// a slug it names is a valid slug, the one of the site host or preview
// host it names.
func FuzzReportHost(f *testing.F) {
	r := New(nil, Config{Hosts: sites.NewHostSplit("web.test", "sites.test")})
	f.Add("https://alice.sites.test/x")
	f.Add("http://v12--alice.sites.test")
	f.Add("staging--alice.sites.test:8080/")
	f.Add("https://web.test/report")
	f.Add("https://[::1]:80/")
	f.Add("https://a.b.sites.test/")
	f.Add("https://xn--e1afmkfd.sites.test/")
	f.Fuzz(func(t *testing.T, raw string) {
		host, err := r.host(raw)
		if err != nil {
			return
		}
		slug, err := r.slugOf(host)
		if err != nil {
			t.Fatal(err) // no custom domains: no lookup to fail
		}
		if slug != "" && sites.ValidateSlug(slug) != nil {
			t.Fatalf("%q: slug %q of host %q is no valid slug", raw, slug, host)
		}
		if slug != "" && !strings.HasSuffix(host, slug+".sites.test") {
			t.Fatalf("%q: slug %q is not the host's %q", raw, slug, host)
		}
	})
}
