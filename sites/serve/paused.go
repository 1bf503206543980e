package serve

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"sitedrop/sites"
)

// The paused page: what every host of a site its owner paused answers
// (sites.Site.Paused), whatever the path.
var (
	pausedPage   = notFoundPage("503", "Site paused", "The owner of this site has paused it. Please come back later.")
	pausedLength = []string{strconv.Itoa(len(pausedPage))}
	// pausedRetryAfter is the paused page's Retry-After, in seconds: a
	// pause has no known end, and an hour keeps crawlers from dropping
	// the site while not hammering it.
	pausedRetryAfter = []string{"3600"}
)

// servePaused answers r with the paused page: 503 with Retry-After, not
// cached, noindex (the page says so too); HEAD gets the headers only.
func servePaused(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h["Retry-After"] = pausedRetryAfter
	h["X-Robots-Tag"] = noindexValue
	notFound(w, r, http.StatusServiceUnavailable, pausedPage, pausedLength)
}

// serveMoved answers r, a request for a renamed site's old host, with a
// 301 to the same path and query on the host the site has now: the
// request's host with its first label's slug (after the preview label
// and "--" on a preview host) replaced by movedTo, port kept. The
// Location is scheme-relative, so it keeps the scheme the request came
// with (behind a TLS-terminating proxy too). Cached for an hour: a
// redirect lasts until the old slug is freed, but not forever.
func serveMoved(w http.ResponseWriter, r *http.Request, st *site) {
	host := r.Host
	rest := ""
	if i := strings.IndexByte(host, '.'); i >= 0 {
		host, rest = host[:i], host[i:]
	}
	label := st.movedTo
	if st.preview != "" {
		label = st.preview + sites.PreviewSep + st.movedTo
	}
	target := "//" + label + strings.ToLower(rest) + (&url.URL{Path: r.URL.Path}).EscapedPath()
	if r.URL.RawQuery != "" {
		target += "?" + r.URL.RawQuery
	}
	h := w.Header()
	h.Set("Location", target)
	h["Cache-Control"] = movedCacheValue
	w.WriteHeader(http.StatusMovedPermanently)
}

var movedCacheValue = []string{"public, max-age=3600"}

// The "awaiting claim" page: what every host of an anonymous site held
// until claimed answers (sites.Site.AwaitingClaim), whatever the path.
var (
	awaitingClaimPage = notFoundPage("403", "Awaiting claim",
		"This site was published anonymously and is not shown until its publisher claims it with an account.")
	awaitingClaimLength = []string{strconv.Itoa(len(awaitingClaimPage))}
)

// serveAwaitingClaim answers r with the "awaiting claim" page: 403, not
// cached, noindex; HEAD gets the headers only. 403 and not 404: the site
// exists and its address is taken, but this server will not show it
// until an account owns it (an instance that keeps anonymous sites
// unserved, so that an anonymous phishing page never reaches a victim).
func serveAwaitingClaim(w http.ResponseWriter, r *http.Request) {
	w.Header()["X-Robots-Tag"] = noindexValue
	notFound(w, r, http.StatusForbidden, awaitingClaimPage, awaitingClaimLength)
}
