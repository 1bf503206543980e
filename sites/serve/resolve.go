package serve

import (
	"net/http"
	"path"
	"strings"

	"sitedrop/sites/rules"
)

// resolved is what a request path maps to: a file served with a status,
// a redirect to a canonical URL path, or a redirect rule's target.
type resolved struct {
	file     *servedFile // nil when nothing matches
	status   int
	redirect string // canonical path to redirect to, when set
	location string // a redirect rule's Location (status is the rule's)
}

// resolvePath maps a request path (and its raw query, for the site's
// compiled _redirects, nil for none) to what to answer, in three steps: the file the path names, or a redirect
// to its page's canonical URL (see lookup); then the site's _redirects,
// of which only forced rules apply where a file answers the path
// (shadowing); then the fallbacks: index.html with status 200 for a
// single-page app, the site's 404.html with status 404, or nothing (the
// default 404 page).
func resolvePath(st *site, redirects *rules.Redirects, reqPath, rawQuery string) resolved {
	p := cleanRequestPath(reqPath)
	res, found := st.lookup(p, p != "" && strings.HasSuffix(reqPath, "/"))
	if redirects != nil {
		if m, ok := redirects.Match(reqPath, rawQuery, found); ok {
			return ruleAnswer(st, m)
		}
	}
	if found {
		return res
	}
	if f := st.served["index.html"]; st.isSPA && f != nil {
		return resolved{file: f, status: http.StatusOK}
	}
	return st.missing()
}

// missing is the answer to a path nothing answers: the site's own
// 404.html, or the default 404 page.
func (st *site) missing() resolved {
	if f := st.served["404.html"]; f != nil {
		return resolved{file: f, status: http.StatusNotFound}
	}
	return resolved{status: http.StatusNotFound}
}

// lookup finds the file for the clean path p (dir: the request ended in
// "/"), or the redirect to its canonical URL; ok is false when no file
// answers p. Each page has one URL, and the first rule that names a file
// decides:
//
//	/            index.html
//	/a/          a/index.html; else 308 to /a when a.html exists
//	/a           the file a; else a.html; else 308 to /a/ when a/index.html exists
//
// and the other spellings of a page redirect to that URL: /a.html to /a
// (unless a file named a takes /a), /a/index.html and /a/index to /a/,
// /index.html and /index to /. When both a.html and a/index.html exist,
// /a is a.html and /a/ is a/index.html. A file that is not a page (its
// name does not end in .html) is served at its own path only.
func (st *site) lookup(p string, dir bool) (resolved, bool) {
	get := func(name string) *servedFile { return st.served[name] }
	switch {
	case p == "":
		if f := get("index.html"); f != nil {
			return resolved{file: f, status: http.StatusOK}, true
		}
	case dir:
		if f := get(p + "/index.html"); f != nil {
			return resolved{file: f, status: http.StatusOK}, true
		}
		if get(p+".html") != nil && get(p) == nil {
			return resolved{redirect: "/" + p}, true // /about/ → /about
		}
	default:
		if f := get(p); f != nil {
			if to, ok := st.pageURL(p); ok {
				return resolved{redirect: to}, true // /about.html → /about
			}
			return resolved{file: f, status: http.StatusOK}, true
		}
		if f := get(p + ".html"); f != nil {
			if p == "index" || strings.HasSuffix(p, "/index") {
				return resolved{redirect: "/" + strings.TrimSuffix(p, "index")}, true // /a/index → /a/
			}
			return resolved{file: f, status: http.StatusOK}, true
		}
		if get(p+"/index.html") != nil {
			// /docs → /docs/, so the page's relative links resolve
			return resolved{redirect: "/" + p + "/"}, true
		}
	}
	return resolved{}, false
}

// pageURL returns the canonical URL path of the page file p when it is
// not /p: "/a/" for a/index.html, "/a" for a.html unless a file named a
// takes that URL. ok is false for any other file.
func (st *site) pageURL(p string) (string, bool) {
	stem, isPage := strings.CutSuffix(p, ".html")
	if !isPage {
		return "", false
	}
	if stem == "index" || strings.HasSuffix(stem, "/index") {
		return "/" + strings.TrimSuffix(stem, "index"), true
	}
	if stem == "" || strings.HasSuffix(stem, "/") || st.served[stem] != nil {
		return "", false // ".html", "a/.html", or a file takes /stem
	}
	return "/" + stem, true
}

// cleanPath is the clean spelling of a request path: "." and ".."
// resolved, repeated slashes folded, one trailing slash kept.
func cleanPath(reqPath string) string {
	p := "/" + cleanRequestPath(reqPath)
	if p != "/" && strings.HasSuffix(reqPath, "/") {
		p += "/"
	}
	return p
}

// cleanRequestPath is the manifest path a request path names: cleaned,
// without the leading slash. A path that is already clean (the usual
// case) is sliced, not copied.
func cleanRequestPath(reqPath string) string {
	if isCleanPath(reqPath) {
		return strings.TrimSuffix(reqPath[1:], "/")
	}
	return strings.TrimPrefix(path.Clean("/"+reqPath), "/")
}

// isCleanPath reports whether p starts with "/" and has no empty, "." or
// ".." segment (a trailing slash is allowed).
func isCleanPath(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	start := 1
	for i := 1; i <= len(p); i++ {
		if i < len(p) && p[i] != '/' {
			continue
		}
		seg := p[start:i]
		if (seg == "" && i < len(p)) || seg == "." || seg == ".." {
			return false
		}
		start = i + 1
	}
	return true
}
