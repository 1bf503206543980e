package server

import (
	"net/http"
	"strings"
)

// The web host's HTTP rules that no route owns: what its answers say to
// browsers (CORS, HSTS) and where a path with a trailing slash goes.
// hooks binds them as middlewares and the catch-all route.

// CORSMethods are the methods a CORS preflight of sitedrop's own routes
// may ask for.
const CORSMethods = "GET, HEAD, PUT, PATCH, POST, DELETE"

// KeyedCORS sets on h the CORS headers of sitedrop's own routes (not
// PocketBase's /api/ and /_/, not /submit/, whose forms any origin may
// post) for r, a request that carries an Origin. Any origin is allowed
// only for requests that carry a key (keyed: Authorization: Bearer), and
// preflights only when they ask for the Authorization header. Such
// requests are never sent by a browser on its own, and no cookie is
// allowed along (no Access-Control-Allow-Credentials), so another page can
// only act with a key it already has. preflight reports an OPTIONS
// request, which the caller answers 204 at once.
func KeyedCORS(r *http.Request, h http.Header, keyed bool) (preflight bool) {
	h.Add("Vary", "Origin")
	if r.Method != http.MethodOptions {
		if keyed {
			h.Set("Access-Control-Allow-Origin", "*")
			h.Set("Access-Control-Expose-Headers", "Retry-After")
		}
		return false
	}
	h.Add("Vary", "Access-Control-Request-Method")
	h.Add("Vary", "Access-Control-Request-Headers")
	asked := r.Header.Get("Access-Control-Request-Headers")
	if headerListHas(asked, "Authorization") {
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Access-Control-Allow-Methods", CORSMethods)
		h.Set("Access-Control-Allow-Headers", asked)
		h.Set("Access-Control-Max-Age", "600")
	}
	return true
}

// headerListHas reports whether a comma-separated list of header names
// holds name.
func headerListHas(list, name string) bool {
	for _, h := range strings.Split(list, ",") {
		if strings.EqualFold(strings.TrimSpace(h), name) {
			return true
		}
	}
	return false
}

// HSTS is the Strict-Transport-Security of the web host's answers when
// it is reached over https: use https for two years. Not
// includeSubDomains: the web host's parent domain may hold other
// services the self-hoster runs over plain HTTP.
const HSTS = "max-age=63072000"

// WithoutTrailingSlash is the address of a GET or HEAD request without
// the trailing slashes of its path, query kept, as Netlify's pretty URLs
// do (/account/ is /account); ok is false when there are none, or when
// what is left would not be a path of this host ("//host").
func WithoutTrailingSlash(r *http.Request) (string, bool) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return "", false
	}
	p := r.URL.EscapedPath()
	if len(p) < 2 || !strings.HasSuffix(p, "/") {
		return "", false
	}
	p = strings.TrimRight(p, "/")
	if p == "" || strings.HasPrefix(p, "//") || strings.HasPrefix(p, "/\\") {
		return "", false
	}
	if r.URL.RawQuery != "" {
		p += "?" + r.URL.RawQuery
	}
	return p, true
}
