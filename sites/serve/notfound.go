package serve

import (
	_ "embed"
	"net/http"
	"strconv"
	"strings"
)

// notFoundTemplate is the default 404 page (and the paused page's
// shape): self-contained (inline CSS, no script, image, font or link to
// another origin), readable on a phone and in dark mode, noindex.
// {{code}}, {{title}} and {{message}} are filled in once.
//
//go:embed notfound.html
var notFoundTemplate string

// The default 404 pages: a missing page of a site without its own
// 404.html, and a host that names no live site.
var (
	defaultNotFound = notFoundPage("404", "Page not found",
		`There is nothing at this address. <a href="/">Go to the home page</a>.`)
	siteNotFound = notFoundPage("404", "Site not found",
		"No site is published at this address: it may have expired or been taken offline.")
	defaultNotFoundLength = []string{strconv.Itoa(len(defaultNotFound))}
	siteNotFoundLength    = []string{strconv.Itoa(len(siteNotFound))}
	htmlTypeValue         = []string{"text/html; charset=utf-8"}
)

// notFoundPage fills the template; code, title and message are
// constants (message may hold markup).
func notFoundPage(code, title, message string) []byte {
	return []byte(strings.NewReplacer("{{code}}", code, "{{title}}", title, "{{message}}", message).Replace(notFoundTemplate))
}

// notFound answers status (404, or a rule's 410) with one of the default
// pages (page and length), not cached; HEAD gets the headers only.
func notFound(w http.ResponseWriter, r *http.Request, status int, page []byte, length []string) {
	h := w.Header()
	h["Content-Type"] = htmlTypeValue
	h["Cache-Control"] = noStoreValue
	h["Content-Length"] = length
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(page)
	}
}
