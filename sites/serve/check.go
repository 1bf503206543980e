package serve

import (
	"net/http"

	"sitedrop/sites/rules"
)

// Checker answers, for a version's file paths and _redirects, what
// serving would do with a request path, without any file's bytes: the
// deploy report (sites/report) uses it to find broken links with the very
// resolution the site server applies (resolvePath), not a copy of it.
type Checker struct {
	st *site
	// plain is st without the single-page app's fallback.
	plain *site
	// redirects are the site's compiled _redirects (nil: none).
	redirects *rules.Redirects
}

// present stands for every file of a Checker's site: resolution only
// tells whether a path names a file.
var present = &servedFile{}

// NewChecker prepares a Checker for the manifest paths of a version
// (rule files among them are skipped, as prepare skips them), its
// compiled _redirects (nil: none) and whether it is a single-page app.
func NewChecker(paths []string, redirects *rules.Redirects, isSPA bool) *Checker {
	st := &site{isSPA: isSPA, served: make(map[string]*servedFile, len(paths))}
	for _, p := range paths {
		if !ruleFile(p) {
			st.served[p] = present
		}
	}
	plain := *st
	plain.isSPA = false
	return &Checker{st: st, plain: &plain, redirects: redirects}
}

// Outcome is what serving answers to a request path, as a Checker sees it.
type Outcome int

// The outcomes of Checker.Resolve.
const (
	// Missing: the site's 404.html, the default 404 page, or a rule's
	// error status (404, 410).
	Missing Outcome = iota
	// Served: a file answers with status 200 (a rewrite included).
	Served
	// Redirected: a redirect, to the page's canonical URL or by a rule.
	Redirected
	// Fallback: a single-page app's index.html, for a path that names
	// no file.
	Fallback
)

// Resolve tells what serving answers to the request path reqPath (as
// received: unescaped, starting with "/") with the raw query rawQuery.
func (c *Checker) Resolve(reqPath, rawQuery string) Outcome {
	res := resolvePath(c.st, c.redirects, reqPath, rawQuery)
	switch {
	case res.redirect != "" || res.location != "":
		return Redirected
	case res.file == nil || res.status >= http.StatusBadRequest:
		return Missing
	case c.st.isSPA && res.status == http.StatusOK && c.fallback(reqPath, rawQuery):
		return Fallback
	}
	return Served
}

// fallback reports whether index.html answers reqPath only as the
// single-page app's fallback: it would be missing without it.
func (c *Checker) fallback(reqPath, rawQuery string) bool {
	res := resolvePath(c.plain, c.redirects, reqPath, rawQuery)
	return res.file == nil || res.status >= http.StatusBadRequest
}

// PageURL is the URL path at which the site serves the file p: its
// page's canonical URL ("/a" for a.html, "/a/" for a/index.html, "/" for
// index.html), else "/" + p. Relative links in p resolve against it.
func (c *Checker) PageURL(p string) string {
	if to, ok := c.st.pageURL(p); ok {
		return to
	}
	return "/" + p
}
