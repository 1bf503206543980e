package sites

// Preview is the URL of version n of the site slug, its preview host
// (https://v12--my-site.<sites domain>/), or "" when the version has no
// preview host (its label would be over 63 bytes: see PreviewLabel).
func (l Links) Preview(slug string, n int) string {
	label := PreviewLabel(slug, n)
	if label == "" {
		return ""
	}
	return l.SiteHost(label + "." + l.SitesDomain)
}

// Alias is the URL of the alias of the site slug
// (https://staging--my-site.<sites domain>/), or "" when it has no
// preview host (see AliasLabel).
func (l Links) Alias(slug, alias string) string {
	label := AliasLabel(slug, alias)
	if label == "" {
		return ""
	}
	return l.SiteHost(label + "." + l.SitesDomain)
}
