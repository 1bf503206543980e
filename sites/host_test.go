package sites

import (
	"strings"
	"testing"
)

func TestValidHost(t *testing.T) {
	for _, c := range []struct {
		host string
		ok   bool
	}{
		{"example.com", true},
		{"Example.COM", true},
		{"my-site.sites.test:8090", true},
		{"localhost", true},
		{"localhost:1", true},
		{"localhost:65535", true},
		{"xn--caf-dma.example", true},
		{"a.b.c.d.e", true},
		{"web_1.internal", true}, // container and service names
		{"127.0.0.1", true},
		{"127.0.0.1:8090", true},
		{"[::1]", true},
		{"[::1]:443", true},
		{"[2001:db8::1]:80", true},
		{"[::ffff:10.0.0.1]", true},
		{strings.Repeat("a", 63) + ".test", true},
		{strings.Repeat("a.", 126) + "a", true}, // 253 bytes

		{"", false},
		{"slug.localhost:8090:80", false},
		{"[slug.localhost]", false},
		{"[slug.localhost]:80", false},
		{"slug.localhost.", false},
		{"slug.localhost.:80", false},
		{"slug.localhost..", false},
		{"slug..localhost", false},
		{".slug.localhost", false},
		{".", false},
		{"slug.localhost:", false},
		{"slug.localhost:65536", false},
		{"slug.localhost:080808", false},
		{"slug.localhost:+80", false},
		{"slug.localhost:0x50", false},
		{":80", false},
		{"-slug.localhost", false},
		{"slug-.localhost", false},
		{"slug.-localhost", false},
		{"sl ug.localhost", false},
		{" slug.localhost", false},
		{"slug.localhost ", false},
		{"slug.localhost\t", false},
		{"café.test", false},
		{"\u212aite.test", false},
		{"slug%2elocalhost", false},
		{"slug.localhost/x", false},
		{"user@slug.localhost", false},
		{strings.Repeat("a", 64) + ".test", false},
		{strings.Repeat("a.", 127), false},
		{strings.Repeat("a.", 127) + "a", false}, // 255 bytes
		{"::1", false},
		{"[::1", false},
		{"::1]", false},
		{"[::1]x", false},
		{"[::1]:", false},
		{"[::1]:80:80", false},
		{"[fe80::1%25eth0]", false},
		{"[fe80::1%eth0]", false},
		{"[127.0.0.1]", false},
		{"[]", false},
		{"[[::1]]", false},
	} {
		if got := ValidHost(c.host); got != c.ok {
			t.Errorf("ValidHost(%q) = %v, want %v", c.host, got, c.ok)
		}
	}
}

// FuzzHostSplit checks the Host validation and the site split together:
// the split never panics, a site host names at most one valid slug label
// right under the sites domain, and a host the validation refuses is never
// a site host.
func FuzzHostSplit(f *testing.F) {
	for _, seed := range []string{
		"slug.localhost:8090:80", "[slug.localhost]", "slug.localhost.", "slug..localhost",
		".localhost", "my-site.localhost", "MY-SITE.LOCALHOST:8090", "www.localhost",
		"a.b.localhost", "[::1]:80", "127.0.0.1:8090", "localhost", "", "my-site.localhost:",
		"web.localhost", "www.web.localhost", "x\u212a.localhost", "my_site.localhost",
	} {
		f.Add(seed, "localhost", "localhost")
		f.Add(seed, "web.localhost", "localhost")
	}
	f.Fuzz(func(t *testing.T, host, web, sitesDomain string) {
		hs := NewHostSplit(web, sitesDomain)
		slug, isSite := hs.Site(host)
		valid := ValidHost(host)
		if !valid && (isSite || slug != "") {
			t.Fatalf("invalid host %q is a site host (%q)", host, slug)
		}
		if !isSite && slug != "" {
			t.Fatalf("Site(%q) = %q, false", host, slug)
		}
		if !valid || strings.HasPrefix(host, "[") {
			return
		}
		_, sites := hs.Domains()
		h := strings.ToLower(host) // valid: ASCII
		if i := strings.LastIndexByte(h, ':'); i >= 0 {
			h = h[:i]
		}
		label, ok := strings.CutSuffix(h, "."+sites)
		if !isSite {
			// a valid name under the sites domain is a site host, unless
			// it is the web host or its www
			if ok && sites != "" && !hs.IsWebHost(host) && !hs.IsWWWWebHost(host) {
				t.Fatalf("valid host %q under %q is not a site host", host, sites)
			}
			return
		}
		if !ok || sites == "" {
			t.Fatalf("site host %q does not end in .%s", host, sites)
		}
		if slug == "" {
			return // a site host that names no site
		}
		if label != slug || strings.Contains(label, ".") || ValidateSlug(slug) != nil {
			t.Fatalf("site host %q names %q (label %q)", host, slug, label)
		}
		if hs.IsWebHost(host) || hs.IsWWWWebHost(host) {
			t.Fatalf("the web host %q is a site", host)
		}
	})
}

// TestHostSplitAllocs guards the per-request host check: validation and
// split make no copy of a site host.
func TestHostSplitAllocs(t *testing.T) {
	hs := NewHostSplit("web.test", "sites.test")
	for _, host := range []string{"bench.sites.test:8090", "web.test", "www.web.test:8090", "[::1]:80", "127.0.0.1"} {
		if n := testing.AllocsPerRun(100, func() { hs.Site(host) }); n != 0 {
			t.Errorf("Site(%q) allocates %v times", host, n)
		}
	}
}

// BenchmarkHostSplit is the per-request host check.
func BenchmarkHostSplit(b *testing.B) {
	hs := NewHostSplit("web.test", "sites.test")
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := hs.Site("bench.sites.test:8090"); !ok {
			b.Fatal("not a site host")
		}
	}
}

// TestNormHost: a Host header's name, as the replica looks its site up.
func TestNormHost(t *testing.T) {
	for in, want := range map[string]string{
		"Site.Example.COM:8080": "site.example.com",
		"site.example.com.":     "site.example.com",
		"[::1]:80":              "[::1]",
		"a.b":                   "a.b",
	} {
		if got := NormHost(in); got != want {
			t.Errorf("NormHost(%q) = %q, want %q", in, got, want)
		}
	}
}
