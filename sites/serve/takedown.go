package serve

import (
	"html"
	"net/http"
	"strconv"
)

// takedownPage is the page every host of a taken-down site answers
// (sites.Site.TakenDown), whatever the path: the default 404 page's shape
// with 410 and the administrator's reason, escaped.
func takedownPage(reason string) []byte {
	return notFoundPage("410", "Site taken down", "This site was taken down for: "+html.EscapeString(reason))
}

// serveTakenDown answers r with the site's takedown page: 410 Gone (the
// site is gone from this address until an administrator restores it, and
// a takedown on abuse is not a legal demand, 451's case), not cached,
// noindex (the page says so too); HEAD gets the headers only.
func serveTakenDown(w http.ResponseWriter, r *http.Request, st *site) {
	w.Header()["X-Robots-Tag"] = noindexValue
	notFound(w, r, http.StatusGone, st.takedown, []string{strconv.Itoa(len(st.takedown))})
}
