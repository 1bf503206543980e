package sites

import (
	"errors"
	"regexp"
	"strings"
	"testing"
)

func TestValidateSlug(t *testing.T) {
	tests := []struct {
		slug string
		ok   bool
	}{
		{"my-site", true},
		{"abc", true},
		{"a-b", true},
		{"brave-otter-river", true},
		{strings.Repeat("a", 63), true},
		{strings.Repeat("ab-", 20) + "abc", true}, // 63 bytes
		{"", false},
		{"ab", false},
		{"a-", false},
		{strings.Repeat("a", 64), false},
		{"My-site", false},
		{"MYSITE", false},
		{"my--site", false},
		{"-mysite", false},
		{"mysite-", false},
		{"my_site", false},
		{"my.site", false},
		{"my site", false},
		{"site1", false},
		{"123", false},
		{"xn--caf-dma", false},
		{"café", false},
		{"caf\u00e9s", false},
		{"\u212aite", false}, // Kelvin sign
		{"abc\n", false},
		{" abc", false},
		{"abc\x00", false},
		{"---", false},
	}
	for _, tt := range tests {
		err := ValidateSlug(tt.slug)
		if (err == nil) != tt.ok {
			t.Errorf("ValidateSlug(%q) = %v, want ok=%v", tt.slug, err, tt.ok)
			continue
		}
		if err != nil {
			var se *SlugError
			if !errors.As(err, &se) {
				t.Errorf("ValidateSlug(%q) error %T is not a *SlugError", tt.slug, err)
			}
			const want = "slug must be 3 to 63 lowercase letters, words joined by single hyphens (e.g. my-site)"
			if err.Error() != want {
				t.Errorf("ValidateSlug(%q) error = %q, want %q", tt.slug, err.Error(), want)
			}
		}
	}
}

// TestValidateSlugMatchesRegexp checks the hand-written scanner against the
// documented rule on many generated strings.
func TestValidateSlugMatchesRegexp(t *testing.T) {
	re := regexp.MustCompile(`^[a-z]+(-[a-z]+)*$`)
	alphabet := []string{"a", "z", "-", "A", "0", ".", "_", "é"}
	var gen func(prefix string, depth int)
	gen = func(prefix string, depth int) {
		want := re.MatchString(prefix) && len(prefix) >= SlugMinLen && len(prefix) <= SlugMaxLen
		if got := ValidateSlug(prefix) == nil; got != want {
			t.Errorf("ValidateSlug(%q) ok = %v, regexp says %v", prefix, got, want)
		}
		if depth == 0 {
			return
		}
		for _, c := range alphabet {
			gen(prefix+c, depth-1)
		}
	}
	gen("", 5)
}

func TestIsReservedSlug(t *testing.T) {
	tests := []struct {
		slug  string
		extra []string
		want  bool
	}{
		{"www", nil, true},
		{"api", nil, true},
		{"status", nil, true},
		{"docs", nil, true},
		{"WWW", nil, true},
		{" admin ", nil, true},
		{"my-site", nil, false},
		{"wwww", nil, false},
		{"", nil, false},
		{"billing", []string{"billing"}, true},
		{"billing", []string{" Billing "}, true},
		{"BILLING", []string{"billing"}, true},
		{"billing", []string{"bill"}, false},
		{"my-site", []string{"other", ""}, false},
	}
	for _, tt := range tests {
		if got := IsReservedSlug(tt.slug, tt.extra); got != tt.want {
			t.Errorf("IsReservedSlug(%q, %q) = %v, want %v", tt.slug, tt.extra, got, tt.want)
		}
	}
	for _, r := range ReservedSlugs {
		if err := ValidateSlug(r); err != nil {
			t.Errorf("reserved slug %q is not a valid slug, so reserving it is pointless", r)
		}
	}
}

func TestGenerateSlug(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 1000; i++ {
		s := GenerateSlug()
		if err := ValidateSlug(s); err != nil {
			t.Fatalf("GenerateSlug() = %q: %v", s, err)
		}
		if IsReservedSlug(s, nil) {
			t.Fatalf("GenerateSlug() = %q is reserved", s)
		}
		if n := strings.Count(s, "-"); n != 2 {
			t.Fatalf("GenerateSlug() = %q has %d hyphens, want 2", s, n)
		}
		seen[s] = true
	}
	// 1000 draws from over 30 million combinations: a handful of repeats
	// at most, unless the generator is broken.
	if len(seen) < 990 {
		t.Errorf("1000 generated slugs have only %d distinct values", len(seen))
	}
}

func TestSlugWordLists(t *testing.T) {
	word := regexp.MustCompile(`^[a-z]{3,8}$`)
	for name, list := range map[string][]string{
		"adjectives": slugAdjectives[:],
		"nouns":      slugNouns[:],
	} {
		if len(list) < 200 {
			t.Errorf("%s: %d words, want at least 200", name, len(list))
		}
		seen := map[string]bool{}
		for _, w := range list {
			if !word.MatchString(w) {
				t.Errorf("%s: word %q is not 3 to 8 letters a-z", name, w)
			}
			if seen[w] {
				t.Errorf("%s: duplicate word %q", name, w)
			}
			seen[w] = true
		}
	}
}

func TestSlugFromHost(t *testing.T) {
	tests := []struct {
		host, domain string
		slug         string
		site         bool
	}{
		// Plain site hosts.
		{"my-site.sites.test", "sites.test", "my-site", true},
		{"my-site.sites.test:8080", "sites.test", "my-site", true},
		{"MY-SITE.Sites.Test", "sites.test", "my-site", true},
		{"my-site.sites.test", "SITES.TEST", "my-site", true},
		{"my-site.sites.test", "sites.test.", "my-site", true}, // a configured domain may end in a dot
		{"my-site.localhost:8090", "localhost", "my-site", true},
		{"www.sites.test", "sites.test", "www", true}, // reserved, but syntactically a slug

		// Site hosts that name no site.
		{"a.b.sites.test", "sites.test", "", true},
		{"abc.def.sites.test", "sites.test", "", true},
		{"site1.sites.test", "sites.test", "", true},
		{"123.sites.test", "sites.test", "", true},
		{"xn--caf-dma.sites.test", "sites.test", "", true},
		{"ab.sites.test", "sites.test", "", true},
		{"my--site.sites.test", "sites.test", "", true},
		{"my_site.sites.test", "sites.test", "", true},
		{"a1b.sites.test", "sites.test", "", true},

		// Malformed hosts (see ValidHost) are never site hosts: the server
		// refuses them before either side sees them.
		{"my-site.sites.test:", "sites.test", "", false},
		{"my-site.sites.test.", "sites.test", "", false},
		{"my-site.sites.test.:443", "sites.test", "", false},
		{"my-site.sites.test:8090:80", "sites.test", "", false},
		{"my-site.sites.test:99999", "sites.test", "", false},
		{"my-site.sites.test:8o", "sites.test", "", false},
		{".sites.test", "sites.test", "", false},
		{"..sites.test", "sites.test", "", false},
		{"abc..sites.test", "sites.test", "", false},
		{"-abc.sites.test", "sites.test", "", false},
		{"café.sites.test", "sites.test", "", false},
		{"\u212aite.sites.test", "sites.test", "", false}, // Kelvin sign is not k
		{strings.Repeat("a", 64) + ".sites.test", "sites.test", "", false},
		{" my-site.sites.test", "sites.test", "", false},

		// Not site hosts.
		{"", "sites.test", "", false},
		{"sites.test", "sites.test", "", false},
		{"sites.test:8090", "sites.test", "", false},
		{"sites.test.", "sites.test", "", false},
		{"SITES.TEST", "sites.test", "", false},
		{"evilsites.test", "sites.test", "", false},
		{"my-site.evilsites.test", "sites.test", "", false},
		{"my-site.sites.test.evil.com", "sites.test", "", false},
		{"my-site.sites.testx", "sites.test", "", false},
		{"my-site.sites.test..", "sites.test", "", false},
		{"example.com", "sites.test", "", false},
		{"127.0.0.1", "sites.test", "", false},
		{"127.0.0.1:8090", "sites.test", "", false},
		{"[::1]:80", "sites.test", "", false},
		{"[::1]", "sites.test", "", false},
		{"::1", "sites.test", "", false},
		{"[my-site.sites.test]:80", "sites.test", "", false},
		{"my-site.sites.test", "", "", false},
		{"my-site.sites.test", ".", "", false},
		{"my-site.sites.test ", "sites.test", "", false},
		{"my-site.k\u212aites.test", "kkites.test", "", false},
	}
	for _, tt := range tests {
		slug, site := SlugFromHost(tt.host, tt.domain)
		if slug != tt.slug || site != tt.site {
			t.Errorf("SlugFromHost(%q, %q) = (%q, %v), want (%q, %v)",
				tt.host, tt.domain, slug, site, tt.slug, tt.site)
		}
	}
}

func TestSiteSlugNeverTakesTheWebHost(t *testing.T) {
	scenarios := []struct {
		host, web, sites string
		slug             string
		isSite           bool
	}{
		{"web.example.com", "web.example.com", "example.com", "", false},
		{"WEB.example.com:8090", "web.example.com", "example.com", "", false},
		{"web.example.com.", "web.example.com", "example.com", "", false},
		// www.<web host> redirects to the web host: never a site, whether
		// the sites domain is the web host or lies above it.
		{"www.localhost:8090", "localhost", "localhost", "", false},
		{"WWW.example.com", "example.com", "example.com", "", false},
		{"www.web.example.com", "web.example.com", "example.com", "", false},
		{"www.example.com", "web.example.com", "example.com", "www", true}, // not the web host's www
		{"blog.example.com", "web.example.com", "example.com", "blog", true},
		{"localhost:8090", "localhost", "localhost", "", false},
		{"blog.localhost:8090", "localhost", "localhost", "blog", true},
		{"blog.sites.test", "web.test", "sites.test", "blog", true},
	}
	for _, s := range scenarios {
		slug, isSite := NewHostSplit(s.web, s.sites).Site(s.host)
		if slug != s.slug || isSite != s.isSite {
			t.Errorf("NewHostSplit(%q, %q).Site(%q) = %q, %v", s.web, s.sites, s.host, slug, isSite)
		}
	}
	for _, s := range []struct{ web, sites, want string }{
		{"web.example.com", "example.com", "web"},
		{"a.b.example.com", "example.com", ""},
		{"example.com", "example.com", ""},
		{"deploy.example.net", "example.com", ""},
		{"Web.Example.com:443", "example.com", "web"},
	} {
		if got := WebHostLabel(s.web, s.sites); got != s.want {
			t.Errorf("WebHostLabel(%q, %q) = %q, want %q", s.web, s.sites, got, s.want)
		}
	}
}
