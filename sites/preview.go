package sites

import (
	"strconv"
	"strings"
)

// A preview host is "<label>--<slug>" under the sites domain, one DNS
// label: the label is either a version's ("v<N>", N the version number
// without leading zeros) or an alias ("staging"). Slugs hold no digits and
// no "--", and neither does a label, so the split at the first "--" is the
// only one possible. These functions are pure: whether the version or
// alias exists is the caller's question.

// PreviewSep joins a preview label to its site's slug.
const PreviewSep = "--"

// AliasMaxLen is the longest alias name, in bytes.
const AliasMaxLen = 32

// maxPreviewVersion bounds the number in a version label, so that parsing
// never overflows and a label stays short (nine digits is a billion
// versions of one site).
const maxPreviewVersion = 999_999_999

// ValidAlias reports whether name is a valid alias:
// ^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$, without "--", not of the form
// "v<digits>" (which names a version), and not "xn": a host label that
// starts with "xn--" is an internationalised name's ASCII form, which
// browsers decode (and refuse when it is no valid punycode).
func ValidAlias(name string) bool {
	if len(name) < 1 || len(name) > AliasMaxLen || name == "xn" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '-' && i > 0 && i < len(name)-1 && name[i-1] != '-':
		default:
			return false
		}
	}
	return !versionShaped(name)
}

// versionShaped reports whether s is "v" followed by one or more digits,
// the shape kept for version labels (leading zeros included, so that
// "v012" is neither a version label nor an alias).
func versionShaped(s string) bool {
	if len(s) < 2 || s[0] != 'v' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// parseVersionLabel returns N for a version label "v<N>": N ≥ 1, no
// leading zero, at most maxPreviewVersion.
func parseVersionLabel(s string) (int, bool) {
	if !versionShaped(s) || s[1] == '0' || len(s) > 10 {
		return 0, false
	}
	n, err := strconv.Atoi(s[1:])
	if err != nil || n < 1 || n > maxPreviewVersion {
		return 0, false
	}
	return n, true
}

// ParsePreviewLabel splits a host's first DNS label (already lowercased)
// into a preview's parts. For "v12--my-site" it returns slug "my-site",
// version "v12", n 12; for "staging--my-site" slug "my-site" and alias
// "staging". ok is false for anything else: no "--", a label that is
// neither a version label nor a valid alias, an invalid slug, or a whole
// label over SlugMaxLen (63) bytes. It does not check reserved slugs.
func ParsePreviewLabel(label string) (slug, version string, n int, alias string, ok bool) {
	if len(label) > SlugMaxLen {
		return "", "", 0, "", false
	}
	head, rest, found := strings.Cut(label, PreviewSep)
	if !found || !validSlug(rest) {
		return "", "", 0, "", false
	}
	if v, isVersion := parseVersionLabel(head); isVersion {
		return rest, head, v, "", true
	}
	if ValidAlias(head) {
		return rest, "", 0, head, true
	}
	return "", "", 0, "", false
}

// PreviewLabel is the host label of version n of the site slug
// ("v12--my-site"), or "" when that has no preview host: n out of range,
// an invalid slug, or a label over SlugMaxLen bytes (its preview_url is
// then omitted).
func PreviewLabel(slug string, n int) string {
	if n < 1 || n > maxPreviewVersion || !validSlug(slug) {
		return ""
	}
	l := "v" + strconv.Itoa(n) + PreviewSep + slug
	if len(l) > SlugMaxLen {
		return ""
	}
	return l
}

// AliasLabel is the host label of the alias of the site slug
// ("staging--my-site"), or "" when that has no preview host: an invalid
// alias or slug, or a label over SlugMaxLen bytes.
func AliasLabel(slug, alias string) string {
	if !ValidAlias(alias) || !validSlug(slug) {
		return ""
	}
	l := alias + PreviewSep + slug
	if len(l) > SlugMaxLen {
		return ""
	}
	return l
}

// SiteLabel is Site for the site server: the host's label under the sites
// domain when it is a slug or a preview label ("v12--my-site",
// "staging--my-site"), which the server loads and caches by; ("", true)
// for any other host under the sites domain; ("", false) for the rest.
// Custom domains never have previews: only the sites domain is split.
func (s HostSplit) SiteLabel(host string) (label string, isSiteHost bool) {
	slug, isSite := s.Site(host)
	if !isSite || slug != "" {
		return slug, isSite
	}
	h := NormHost(host)
	label = h[:len(h)-len(s.sites)-1]
	if _, _, _, _, ok := ParsePreviewLabel(label); ok {
		return label, true
	}
	return "", true
}

// PreviewBase is the host (or label) key names with its preview label
// replaced by its slug: "my-site.example.com" for
// "v12--my-site.example.com", "my-site" for "staging--my-site"; key
// itself when its first label is not a preview label. The site server
// forgets a site's previews with the site.
func PreviewBase(key string) string {
	first, rest := key, ""
	if i := strings.IndexByte(key, '.'); i >= 0 {
		first, rest = key[:i], key[i:]
	}
	if !strings.Contains(first, PreviewSep) {
		return key
	}
	slug, _, _, _, ok := ParsePreviewLabel(first)
	if !ok {
		return key
	}
	return slug + rest
}
