package sites

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Site is what the server needs to answer for one deployment: its live
// manifest and the rules that decide whether and how it is served.
type Site struct {
	ID        string
	Slug      string
	Status    string
	IsSPA     bool
	VersionID string
	// ExpiresAt is zero for a deployment that does not expire.
	ExpiresAt time.Time
	Files     Manifest
}

// live reports whether the site may be served at now.
func (s *Site) live(now time.Time) bool {
	return s.Status == StatusActive && (s.ExpiresAt.IsZero() || now.Before(s.ExpiresAt))
}

// SiteLoader returns the site for slug, or an error wrapping ErrNotFound.
type SiteLoader func(slug string) (*Site, error)

// Server serves deployed sites. It is an http handler for site hosts only:
// the caller decides that a request's host is <slug>.<sites-domain> and hands
// it the slug.
//
// For a request path it serves, in order: the file at that path; for
// clean URLs, path.html, or a 308 redirect from /dir to /dir/ when
// dir/index.html exists ("/dir/" serves dir/index.html, and redirects to
// /dir when only dir.html exists; "/" is index.html); when the site is a
// single-page app, index.html with status 200; the site's own 404.html with
// status 404; a plain 404. Redirects keep the query string.
//
// Every file answer carries the manifest's Content-Type,
// X-Content-Type-Options: nosniff, a strong ETag (the content's SHA-256)
// with If-None-Match answered 304, Range support and Cache-Control: no-cache
// (browsers revalidate, which the ETag makes cheap). Only GET and HEAD are
// allowed. No cookie is ever set or read.
//
// Sites are cached in memory by slug; Forget drops an entry and must be
// called whenever a deployment changes, so the next request sees the change.
// A site that is disabled or past its expiry answers 404 at once.
type Server struct {
	load  SiteLoader
	store BlobStore
	cache *siteCache
	// now is the clock; tests replace it.
	now func() time.Time
}

// maxCachedSites bounds the site cache by entry count.
const maxCachedSites = 10000

// NewServer returns a Server that loads sites with load and reads content
// from store.
func NewServer(load SiteLoader, store BlobStore) *Server {
	return &Server{load: load, store: store, cache: newSiteCache(maxCachedSites), now: time.Now}
}

// Forget drops slug from the cache so the next request reloads it.
func (s *Server) Forget(slug string) { s.cache.forget(slug) }

// ServeSite answers r for the site slug (empty: a site host with no valid
// slug, which is a 404).
func (s *Server) ServeSite(w http.ResponseWriter, r *http.Request, slug string) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		plainError(w, http.StatusMethodNotAllowed, "Method not allowed")
		return
	}
	site, err := s.site(slug)
	if err != nil {
		if !errors.Is(err, ErrNotFound) {
			http.Error(w, "Internal error", http.StatusInternalServerError)
			return
		}
		plainError(w, http.StatusNotFound, "Site not found")
		return
	}
	if !site.live(s.now()) {
		plainError(w, http.StatusNotFound, "Site not found")
		return
	}
	res := resolvePath(site, r.URL.Path)
	switch {
	case res.redirect != "":
		target := (&url.URL{Path: res.redirect}).EscapedPath()
		if r.URL.RawQuery != "" {
			target += "?" + r.URL.RawQuery
		}
		h.Set("Location", target)
		h.Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusPermanentRedirect)
	case res.name == "":
		plainError(w, http.StatusNotFound, "Not found")
	default:
		s.serveFile(w, r, site.Files[res.name], res.status)
	}
}

// Live reports whether slug names a site that is served right now. It
// reads through the same cache as ServeSite.
func (s *Server) Live(slug string) bool {
	site, err := s.site(slug)
	return err == nil && site.live(s.now())
}

func (s *Server) site(slug string) (*Site, error) {
	if slug == "" {
		return nil, ErrNotFound
	}
	if site, ok := s.cache.get(slug); ok {
		return site, nil
	}
	gen := s.cache.generation()
	site, err := s.load(slug)
	if err != nil {
		return nil, err
	}
	s.cache.put(slug, site, gen)
	return site, nil
}

// resolved is what a request path maps to: a manifest path served with a
// status, or a redirect to a canonical URL path.
type resolved struct {
	name     string // manifest path; "" when nothing matches
	status   int
	redirect string // canonical path to redirect to, when set
}

// resolvePath maps a request path to what to answer.
func resolvePath(site *Site, reqPath string) resolved {
	p := strings.TrimPrefix(path.Clean("/"+reqPath), "/")
	has := func(name string) bool { _, ok := site.Files[name]; return ok }
	switch {
	case p == "":
		if has("index.html") {
			return resolved{name: "index.html", status: http.StatusOK}
		}
	case strings.HasSuffix(reqPath, "/"):
		if has(p + "/index.html") {
			return resolved{name: p + "/index.html", status: http.StatusOK}
		}
		if has(p + ".html") {
			return resolved{redirect: "/" + p} // /about/ → /about
		}
	default:
		if has(p) {
			return resolved{name: p, status: http.StatusOK}
		}
		if has(p + ".html") {
			return resolved{name: p + ".html", status: http.StatusOK}
		}
		if has(p + "/index.html") {
			// /docs → /docs/, so the page's relative links resolve
			return resolved{redirect: "/" + p + "/"}
		}
	}
	if site.IsSPA && has("index.html") {
		return resolved{name: "index.html", status: http.StatusOK}
	}
	if has("404.html") {
		return resolved{name: "404.html", status: http.StatusNotFound}
	}
	return resolved{status: http.StatusNotFound}
}

func (s *Server) serveFile(w http.ResponseWriter, r *http.Request, f ManifestEntry, status int) {
	blob, err := s.store.Open(r.Context(), f.Hash)
	if err != nil {
		http.Error(w, "Internal error", http.StatusInternalServerError)
		return
	}
	defer blob.Close()
	h := w.Header()
	h.Set("Content-Type", f.Type)
	h.Set("Cache-Control", "no-cache")
	if status != http.StatusOK {
		// The site's own 404 page: no ETag or ranges, just the page.
		h.Set("Content-Length", strconv.FormatInt(blob.Size(), 10))
		w.WriteHeader(status)
		if r.Method != http.MethodHead {
			_, _ = io.Copy(w, blob)
		}
		return
	}
	h.Set("ETag", `"`+f.Hash+`"`)
	http.ServeContent(w, r, "", time.Time{}, blob)
}

func plainError(w http.ResponseWriter, status int, msg string) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, msg+"\n")
}

// siteCache maps slugs to loaded sites. A load that started before a
// forget is not stored, so an invalidation is never overwritten by the
// stale result of a load running concurrently with it.
type siteCache struct {
	mu    sync.RWMutex
	max   int
	gen   uint64
	sites map[string]*Site
}

func newSiteCache(max int) *siteCache {
	return &siteCache{max: max, sites: map[string]*Site{}}
}

func (c *siteCache) get(slug string) (*Site, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	s, ok := c.sites[slug]
	return s, ok
}

func (c *siteCache) generation() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.gen
}

func (c *siteCache) put(slug string, s *Site, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if len(c.sites) >= c.max {
		for k := range c.sites { // evict one arbitrary entry
			delete(c.sites, k)
			break
		}
	}
	c.sites[slug] = s
}

func (c *siteCache) forget(slug string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	delete(c.sites, slug)
}
