package sites

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// aliasRE and slugRE are the decisions' rules written as regular
// expressions, an independent statement of what ValidAlias and validSlug
// implement by hand.
var (
	aliasRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$`)
	slugRE  = regexp.MustCompile(`^[a-z]+(-[a-z]+)*$`)
	vRE     = regexp.MustCompile(`^v[0-9]+$`)
)

// FuzzParsePreviewLabel: ParsePreviewLabel never panics; what it accepts
// is exactly a version label ("v<N>", N ≥ 1 without leading zero) or a
// valid alias, "--", a valid slug, in at most 63 bytes; and formatting
// the parts back (PreviewLabel / AliasLabel) gives the input again.
func FuzzParsePreviewLabel(f *testing.F) {
	for _, s := range []string{
		"v1--my-site", "v12--my-site", "v999999999--abc", "v1000000000--abc", "v0--abc", "v012--abc",
		"staging--my-site", "pr-12--my-site", "a--abc", "v--abc", "v1a--abc", "x---abc", "-a--abc", "a---abc",
		"my-site", "--my-site", "v1--", "v1--ab", "v1--my--site", "Staging--my-site", "v1--my-site1",
		strings.Repeat("a", 32) + "--abc", strings.Repeat("a", 33) + "--abc",
		"v1--" + strings.Repeat("a", 59), "v1--" + strings.Repeat("a", 60), "a-b--x-y", "xn--abc", "xn--bcher-kva", "\xff--abc", "v١--abc",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, label string) {
		slug, version, n, alias, ok := ParsePreviewLabel(label)
		head, rest, found := strings.Cut(label, "--")
		wantVersion := found && vRE.MatchString(head) && head[1] != '0'
		if wantVersion {
			if v, err := strconv.Atoi(head[1:]); err != nil || v > maxPreviewVersion {
				wantVersion = false
			}
		}
		wantAlias := found && aliasRE.MatchString(head) && !strings.Contains(head, "--") && !vRE.MatchString(head) && head != "xn"
		want := len(label) <= 63 && found && len(rest) >= SlugMinLen && slugRE.MatchString(rest) && (wantVersion || wantAlias)
		if ok != want {
			t.Fatalf("ParsePreviewLabel(%q) ok = %v, want %v", label, ok, want)
		}
		if !ok {
			if slug != "" || version != "" || n != 0 || alias != "" {
				t.Fatalf("ParsePreviewLabel(%q) refused but returned parts %q %q %d %q", label, slug, version, n, alias)
			}
			return
		}
		if slug != rest {
			t.Fatalf("ParsePreviewLabel(%q) slug = %q, want %q", label, slug, rest)
		}
		if (version != "") == (alias != "") {
			t.Fatalf("ParsePreviewLabel(%q): exactly one of version %q and alias %q must be set", label, version, alias)
		}
		var back string
		if version != "" {
			if version != head || "v"+strconv.Itoa(n) != version {
				t.Fatalf("ParsePreviewLabel(%q) version %q n %d", label, version, n)
			}
			back = PreviewLabel(slug, n)
		} else {
			if alias != head || n != 0 {
				t.Fatalf("ParsePreviewLabel(%q) alias %q n %d", label, alias, n)
			}
			back = AliasLabel(slug, alias)
		}
		if back != label {
			t.Fatalf("ParsePreviewLabel(%q) formats back to %q", label, back)
		}
	})
}

// TestPreviewLabelTooLong: a label over one DNS label's 63 bytes has no
// preview host, so its preview URL is omitted.
func TestPreviewLabelTooLong(t *testing.T) {
	slug := strings.Repeat("a", 59)
	if got := PreviewLabel(slug, 1); got != "v1--"+slug {
		t.Fatalf("PreviewLabel(63 bytes) = %q", got)
	}
	if got := PreviewLabel(slug, 10); got != "" {
		t.Fatalf("PreviewLabel(64 bytes) = %q, want none", got)
	}
	if got := AliasLabel(slug, "abcd"); got != "" {
		t.Fatalf("AliasLabel(65 bytes) = %q, want none", got)
	}
	if got := AliasLabel("my-site", "v12"); got != "" {
		t.Fatalf("AliasLabel with a version-shaped alias = %q, want none", got)
	}
}

// TestSiteLabel: the sites domain's preview hosts are split to their
// label; a custom domain or the web host never is, and a host under the
// sites domain that is neither a slug nor a preview label names no site.
func TestSiteLabel(t *testing.T) {
	hs := NewHostSplit("web.test", "sites.test")
	for _, c := range []struct {
		host, label string
		isSite      bool
	}{
		{"my-site.sites.test", "my-site", true},
		{"V12--My-Site.sites.test:8090", "v12--my-site", true},
		{"staging--my-site.sites.test", "staging--my-site", true},
		{"v012--my-site.sites.test", "", true},
		{"v1--my--site.sites.test", "", true},
		{"a.v1--my-site.sites.test", "", true},
		{"v1--my-site.example.com", "", false},
		{"v1--my-site.web.test", "", false},
		{"web.test", "", false},
	} {
		label, isSite := hs.SiteLabel(c.host)
		if label != c.label || isSite != c.isSite {
			t.Errorf("SiteLabel(%q) = %q, %v; want %q, %v", c.host, label, isSite, c.label, c.isSite)
		}
	}
	for in, want := range map[string]string{
		"v12--my-site": "my-site", "staging--my-site.sites.test": "my-site.sites.test",
		"my-site": "my-site", "xn--bcher-kva.example": "xn--bcher-kva.example", "v1--a.b": "v1--a.b",
	} {
		if got := PreviewBase(in); got != want {
			t.Errorf("PreviewBase(%q) = %q, want %q", in, got, want)
		}
	}
}
