package sites

import "sitedrop/sites/rules"

// ParseRules parses the site's _redirects and _headers (files at the
// root, kept in the manifest like any file so that each version has its
// own) and returns the _redirects rules, for the deploy's quality report
// (sites/report resolves links through them), and the lines that will
// not be applied, for the deploy's answer. A site without them has none
// (warnings is empty, not nil). The serving side parses the same bytes
// again when it loads the site.
func ParseRules(files []File) (redirects []rules.Redirect, warnings []rules.Warning) {
	warnings = []rules.Warning{}
	for _, f := range files {
		switch f.Path {
		case rules.RedirectsFile:
			rs, w := rules.ParseRedirects(f.Data)
			redirects = rs
			warnings = append(warnings, w...)
		case rules.HeadersFile:
			_, w := rules.ParseHeaders(f.Data)
			warnings = append(warnings, w...)
		}
	}
	return redirects, warnings
}
