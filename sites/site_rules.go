package sites

import "sitedrop/sites/rules"

// RuleWarnings parses the site's _redirects and _headers (files at the
// root, kept in the manifest like any file so that each version has its
// own) and returns the lines that will not be applied, for the deploy's
// answer. A site without them has none. The serving side parses the same
// bytes again when it loads the site.
func RuleWarnings(files []File) []rules.Warning {
	out := []rules.Warning{}
	for _, f := range files {
		switch f.Path {
		case rules.RedirectsFile:
			_, w := rules.ParseRedirects(f.Data)
			out = append(out, w...)
		case rules.HeadersFile:
			_, w := rules.ParseHeaders(f.Data)
			out = append(out, w...)
		}
	}
	return out
}
