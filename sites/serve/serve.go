// Package serve is the site server's hot path: from a site host's slug to
// the bytes of a file. It caches prepared sites (header values built once,
// precompressed variants picked by Accept-Encoding), compiled rule sets
// and small files' bytes, each within a byte budget; resolves clean URLs,
// single-page apps and 404 pages; answers ETag, Range and HEAD. Its
// listener sends each site response in one write (Listener, Cork) and
// caps each client's open connections (ConnLimit). An optional Recorder (sites/analytics) counts
// each answer of a known site, and an optional CacheCounter (the metrics)
// the content cache's hits and misses. A protected site is behind its gate
// (gate*.go): a password form or a share link, then a signed cookie,
// all from the sites.Site alone. Checker gives the same path resolution,
// without bytes, to the deploy report. The routing of hosts is in hooks.
package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"sitedrop/sites"
	"sitedrop/sites/analytics"
	"sitedrop/sites/store"
)

// SiteLoader returns the site for slug, or an error wrapping
// sites.ErrNotFound (answered 404) or ErrUnavailable (503).
type SiteLoader func(slug string) (*sites.Site, error)

// ErrUnavailable is a SiteLoader's error for a site that cannot be read
// right now (a replica's store is unreachable): 503 with Retry-After.
var ErrUnavailable = errors.New("site temporarily unavailable")

var retryAfterValue = []string{"5"}

// noindexValue is the X-Robots-Tag of every answer on a preview host:
// search engines index the live site only.
var noindexValue = []string{"noindex"}

// site is a loaded site prepared for serving (see prepare): what the hot
// path reads, and nothing else (the manifest is dropped once prepared).
type site struct {
	id, slug, versionID string
	// preview is the preview label (sites.Site.Preview), "" for the
	// live site.
	preview   string
	isSPA     bool
	status    string
	expiresAt time.Time
	// paused: every path answers the paused page (sites.Site.Paused).
	paused bool
	// takedown is the takedown page every path answers, nil unless an
	// administrator took the site down (sites.Site.TakenDown).
	takedown []byte
	// awaitingClaim: every path answers the "awaiting claim" page
	// (sites.Site.AwaitingClaim).
	awaitingClaim bool
	// movedTo is the new slug of a renamed site, whose old host this is:
	// every path redirects there (sites.Site.MovedTo).
	movedTo string
	// served are the files prepared for serving, by path.
	served map[string]*servedFile
	// rules holds the site's _redirects and _headers, compiled, from the
	// rule cache (see rulesOf); nil: the site has neither file.
	rules *ruleRef
	// gate lets visitors of a protected site in; nil for a public site.
	gate *siteGate
	// bytes is the memory the prepared site holds (see cost).
	bytes int64
}

// live reports whether the site may be served at now: active, and not
// past its expiry.
func (s *site) live(now time.Time) bool {
	return s.status == sites.StatusActive && (s.expiresAt.IsZero() || now.Before(s.expiresAt))
}

// Server serves deployed sites. It is an http handler for site hosts only:
// the caller decides that a request's host is <slug>.<sites-domain> and hands
// it the slug.
//
// For a request path it serves the file the path names, with one URL per
// page: /a is a.html, /a/ is a/index.html, / is index.html, and the other
// spellings (/a.html, /a/index.html, /a/index, /index.html, /index; /a/
// when only a.html exists, /a when only a/index.html does) answer 308 to
// it, query kept (see site.lookup). Failing that, a single-page app
// serves index.html with status 200; then the site's own 404.html with
// status 404; then the default 404 page (an HTML page, as for a site that
// is unknown or offline; see notFound). _redirects and _headers at the
// root are never served.
//
// Every file answer carries the manifest's Content-Type and
// X-Content-Type-Options: nosniff. A file with precompressed variants is
// sent as the smallest stored representation the client accepts (the
// identity included; ties go to br, then zstd, then gzip), with Vary:
// Accept-Encoding. Each representation has a strong ETag (its
// content's SHA-256), answered 304 on If-None-Match; Range and HEAD are
// supported. Cache-Control is "public, max-age=31536000, immutable" for
// fingerprinted asset names (see Fingerprinted; never a page) and
// "no-cache" otherwise
// (browsers revalidate, which the ETag makes cheap). Only GET and HEAD are
// allowed. A public site's answers never set or read a cookie.
//
// A protected site (sites.Site.Protection) answers every path with its
// gate page (401, no file bytes) until the visitor passes: with the
// password, posted to GatePath, or with the share link's ?_token=, which
// redirects (303) to the same URL without it. Either sets a signed,
// host-only cookie bound to the site (see signGateCookie). Every answer of
// a protected site is Cache-Control: private.
//
// The hot path reads memory only: sites are cached by slug (within a byte
// budget) with their headers prepared, their compiled _redirects and
// _headers by the files' contents (within another: see ruleCache), and
// small files' bytes by content hash (within a third). Larger files are sent from disk with
// sendfile. Changing must bracket every change of a deployment (before the
// write, and done once its transaction has ended), so the next request
// sees the change and no reader goes back to the old site. A site that is
// disabled or past its expiry answers 404 at once. A site its owner paused
// answers every path of every host (previews too) with the paused page,
// 503 with Retry-After and noindex; an anonymous site held until claimed
// answers the "awaiting claim" page, 403 and noindex; the old host of a renamed site (and
// its old preview hosts) answers 301 to the same path on the new one
// until the old slug is freed (see serveMoved). A site an administrator
// took down answers every path of every host (previews, custom domains
// and old slugs too) with the takedown page, 410, no-store and noindex
// (see serveTakenDown).
type Server struct {
	load    SiteLoader
	store   store.BlobStore
	cache   *siteCache
	content *contentCache
	// files keeps blob files open for the HTTP/1.1 fast path's sendfile.
	files *fileCache
	// ruleSets are the compiled rule sets, by their files' contents.
	ruleSets *ruleCache
	// loading shares a load among the requests that miss the cache
	// together (see loadShared).
	loading singleflight.Group
	// rec counts answers; nil when counting is off. clientIP gives a
	// request's client address for it (nil: the connection's).
	rec      Recorder
	clientIP func(*http.Request) string
	// The gate of protected sites: its cookies' lifetime, whether they
	// are Secure (nil: r.TLS != nil), the failed password attempts'
	// limit per client, the password checks running at once.
	gateTTL time.Duration
	// gateBodyTimeout bounds the time a gate form's body takes to arrive.
	gateBodyTimeout time.Duration
	secureCookies   func(*http.Request) bool
	gateLimit       *gateLimiter
	gateChecks      *passwordChecks
	// now is the clock; tests replace it.
	now func() time.Time
}

// Recorder counts the site server's answers (an *analytics.Aggregator).
// Record is called once per answer of a known site, after it was written,
// on the request's goroutine: it must be cheap.
type Recorder interface {
	Record(analytics.Hit)
}

// CacheCounter counts the lookups of the content cache (small files'
// bytes): hits, and misses read from the store. It is called on the
// request's goroutine: it must be cheap, and allocate nothing
// (hooks/server/metrics' counters).
type CacheCounter interface {
	ContentCache(hit bool)
}

// ServerOptions size the server's caches. Zero fields take the defaults.
type ServerOptions struct {
	// SiteCacheBytes bounds the memory of cached sites (manifests and
	// prepared headers). Default 32 MiB.
	SiteCacheBytes int64
	// ContentCacheBytes bounds the memory of cached file bytes. Default
	// 64 MiB.
	ContentCacheBytes int64
	// RuleCacheBytes bounds the memory of compiled rule sets (_redirects
	// and _headers), which are cached apart from the sites. Default
	// 64 MiB; never less than one rule set at the largest plan's limit.
	RuleCacheBytes int64
	// Recorder, when not nil, counts every answer of a known site.
	Recorder Recorder
	// CacheCounter, when not nil, counts the content cache's hits and
	// misses.
	CacheCounter CacheCounter
	// ClientIP gives the Recorder and the gate's attempt limits a
	// request's client address (behind a trusted proxy, not the
	// connection's). Default: r.RemoteAddr.
	ClientIP func(r *http.Request) string
	// GateCookieTTL is how long a protected site's visitor stays in
	// after passing its gate. Default 7 days.
	GateCookieTTL time.Duration
	// SecureCookies tells whether r reached the server over TLS (behind
	// a TLS-terminating proxy too); then the gate's cookie is Secure and
	// named __Host-sitedrop_gate. Default: r.TLS != nil.
	SecureCookies func(r *http.Request) bool
}

// Default cache sizes (ServerOptions' zero values). DefaultContentCacheBytes
// is also the server's --content-cache default.
const (
	defaultSiteCacheBytes    = 32 << 20
	DefaultContentCacheBytes = 64 << 20
)

// NewServer returns a Server that loads sites with load and reads content
// from blobStore.
func NewServer(load SiteLoader, blobStore store.BlobStore, opts ...ServerOptions) *Server {
	o := ServerOptions{}
	if len(opts) > 0 {
		o = opts[0]
	}
	if o.SiteCacheBytes <= 0 {
		o.SiteCacheBytes = defaultSiteCacheBytes
	}
	if o.ContentCacheBytes <= 0 {
		o.ContentCacheBytes = DefaultContentCacheBytes
	}
	if o.RuleCacheBytes <= 0 {
		o.RuleCacheBytes = defaultRuleCacheBytes
	}
	if o.GateCookieTTL <= 0 {
		o.GateCookieTTL = DefaultGateCookieTTL
	}
	return &Server{
		load:     load,
		store:    blobStore,
		cache:    newSiteCache(o.SiteCacheBytes),
		content:  newContentCache(o.ContentCacheBytes, o.CacheCounter),
		files:    newFileCache(defaultOpenFiles),
		ruleSets: newRuleCache(max(o.RuleCacheBytes, maxRuleSetBytes), defaultRuleKeep, defaultCompileSlots()),
		rec:      o.Recorder,
		clientIP: o.ClientIP,
		now:      time.Now,

		gateTTL:         o.GateCookieTTL,
		gateBodyTimeout: defaultGateBodyTimeout,
		secureCookies:   o.SecureCookies,
		gateLimit:       newGateLimiter(defaultGateFailuresPerClient, defaultGateFailuresPerSite),
		gateChecks:      newPasswordChecks(),
	}
}

// Changing is called before a change to the sites slugs commits, and done
// once it has committed or been abandoned (done may be called more than
// once). In between, the sites are not cached: a load may read the state
// before the commit or after it, and only a load that starts after done
// is stored. So once a reader has seen the new site, no reader sees the
// old one again.
func (s *Server) Changing(slugs ...string) (done func()) {
	s.cache.begin(slugs, s.now())
	var once sync.Once
	return func() { once.Do(func() { s.cache.end(slugs) }) }
}

// ServeSite answers r for the site slug (empty: a site host with no valid
// slug, which is a 404), and hands the answer to the Recorder, if any.
func (s *Server) ServeSite(w http.ResponseWriter, r *http.Request, slug string) {
	if s.rec == nil {
		s.serveSite(w, r, slug)
		return
	}
	s.record(r, s.serveSite(w, r, slug))
}

// record hands the Recorder what ServeSite (or the HTTP/1.1 fast path)
// answered to r.
func (s *Server) record(r *http.Request, o outcome) {
	if o.site == "" {
		return // no site, or one that is offline: nothing to count
	}
	ip := r.RemoteAddr
	if s.clientIP != nil {
		ip = s.clientIP(r)
	}
	if r.Method == http.MethodHead {
		o.bytes = 0
	}
	s.rec.Record(analytics.Hit{
		Site: o.site, Preview: o.preview, Host: r.Host, Path: r.URL.Path,
		Status: o.status, Bytes: o.bytes, Page: o.page,
		IP: ip, UserAgent: firstValue(r.Header["User-Agent"]), Referer: firstValue(r.Header["Referer"]),
	})
}

// outcome is what ServeSite answered, for the Recorder: the site's id
// (empty when no live site was found), the status, the body's length
// (before HEAD is accounted for) and whether it was an HTML page.
type outcome struct {
	site   string
	status int
	bytes  int64
	page   bool
	// preview: the site was a preview (counted apart).
	preview bool
}

// firstValue is v's first element, or "".
func firstValue(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

// serveSite answers r for the site slug and says how (see outcome).
func (s *Server) serveSite(w http.ResponseWriter, r *http.Request, slug string) (o outcome) {
	h := w.Header()
	h["X-Content-Type-Options"] = nosniffValue
	if isPreviewKey(slug) {
		// every answer of a preview host, the unknown ones' and the
		// gate's too (a found site that is no preview drops it below)
		h["X-Robots-Tag"] = noindexValue
	}
	post := r.Method == http.MethodPost && r.URL.Path == GatePath
	if r.Method != http.MethodGet && r.Method != http.MethodHead && !post {
		h["Allow"] = allowValue
		plainError(w, http.StatusMethodNotAllowed, "Method not allowed")
		return outcome{}
	}
	site, err := s.site(slug)
	if err != nil {
		if errors.Is(err, ErrUnavailable) {
			h["Retry-After"] = retryAfterValue
			plainError(w, http.StatusServiceUnavailable, "Site temporarily unavailable")
			return outcome{}
		}
		if !errors.Is(err, sites.ErrNotFound) {
			http.Error(w, "Internal error", http.StatusInternalServerError)
			return outcome{}
		}
		notFound(w, r, http.StatusNotFound, siteNotFound, siteNotFoundLength)
		return outcome{}
	}
	now := s.now()
	if !site.live(now) {
		notFound(w, r, http.StatusNotFound, siteNotFound, siteNotFoundLength)
		return outcome{}
	}
	if site.takedown != nil {
		// before the redirect of an old slug and the gate: every host
		serveTakenDown(w, r, site)
		return outcome{site: site.id, status: http.StatusGone, preview: site.preview != ""}
	}
	if site.movedTo != "" {
		// counted under the site's id, as its new host's answers are
		serveMoved(w, r, site)
		return outcome{site: site.id, status: http.StatusMovedPermanently, preview: site.preview != ""}
	}
	if site.paused {
		servePaused(w, r)
		return outcome{site: site.id, status: http.StatusServiceUnavailable, preview: site.preview != ""}
	}
	if site.awaitingClaim {
		serveAwaitingClaim(w, r)
		return outcome{site: site.id, status: http.StatusForbidden, preview: site.preview != ""}
	}
	if site.preview != "" {
		h["X-Robots-Tag"] = noindexValue
		defer func() { o.preview = true }()
	} else {
		delete(h, "X-Robots-Tag") // a replica's custom domain named like a preview
	}
	if post && site.gate == nil {
		h["Allow"] = allowValue
		plainError(w, http.StatusMethodNotAllowed, "Method not allowed")
		return outcome{}
	}
	var hw *headerWriter // changes the header before it is written; nil: none to change
	if site.gate != nil {
		if post {
			return outcome{site: site.id, status: s.gatePost(w, r, site)}
		}
		if pass, status := s.gate(w, r, site); !pass {
			return outcome{site: site.id, status: status}
		}
		hw = &headerWriter{ResponseWriter: w, private: true, noindex: site.preview != ""}
		w = hw
	}
	if len(r.URL.Path) > maxRequestPath {
		plainError(w, http.StatusRequestURITooLong, "URI too long")
		return outcome{site: site.id, status: http.StatusRequestURITooLong}
	}
	if !isCleanPath(r.URL.Path) {
		// One spelling per path, so that the rules, the _headers
		// (Basic-Auth among them) and the files all see the clean one:
		// the others redirect to it, or straight to its page's URL.
		p := cleanPath(r.URL.Path)
		if res, _ := site.lookup(cleanRequestPath(p), p != "/" && strings.HasSuffix(p, "/")); res.redirect != "" {
			p = res.redirect
		}
		redirect(w, r, p)
		return outcome{site: site.id, status: http.StatusPermanentRedirect}
	}
	rs, err := s.rulesOf(r.Context(), site, now)
	if err != nil {
		http.Error(w, "Internal error", http.StatusInternalServerError)
		return outcome{site: site.id, status: http.StatusInternalServerError}
	}
	if rs.headers != nil {
		ph := pathHeaders{rs.headers.Match(r.URL.Path)}
		if ph.protected() && !ph.authorized(r) {
			askForCredentials(w)
			return outcome{site: site.id, status: http.StatusUnauthorized}
		}
		if len(ph.Headers) > 0 || ph.protected() {
			if hw == nil {
				hw = &headerWriter{ResponseWriter: w, noindex: site.preview != ""}
				w = hw
			}
			hw.ph = ph
		}
	}
	res := resolvePath(site, rs.redirects, r.URL.Path, r.URL.RawQuery)
	switch {
	case res.redirect != "":
		redirect(w, r, res.redirect)
		return outcome{site: site.id, status: http.StatusPermanentRedirect}
	case res.location != "":
		h.Set("Location", res.location)
		h["Cache-Control"] = noCacheValue
		w.WriteHeader(res.status)
		return outcome{site: site.id, status: res.status}
	case res.file == nil:
		notFound(w, r, res.status, defaultNotFound, defaultNotFoundLength)
		return outcome{site: site.id, status: res.status, bytes: int64(len(defaultNotFound)), page: true}
	default:
		status, n := s.serveFile(w, r, res.file, res.status)
		return outcome{site: site.id, status: status, bytes: n, page: res.file.html}
	}
}

// isPreviewKey reports whether key, a site label or a replica's host,
// names a preview: its first label holds "--", which no slug and no
// custom domain under sitedrop's control has (the loader decides whether
// the preview exists). A punycode custom domain (xn--) is no preview.
func isPreviewKey(key string) bool {
	i := strings.Index(key, sites.PreviewSep)
	if i < 0 {
		return false
	}
	dot := strings.IndexByte(key, '.')
	return (dot < 0 || i < dot) && sites.PreviewBase(key) != key
}

// maxRequestPath is the longest request path a site answers (414 past
// it): a file's path is at most 1024 bytes, and this bounds the work of
// matching rules against a path.
const maxRequestPath = 4096

// redirect answers 308 to the site path p, with r's query kept.
func redirect(w http.ResponseWriter, r *http.Request, p string) {
	target := (&url.URL{Path: p}).EscapedPath()
	if r.URL.RawQuery != "" {
		target += "?" + r.URL.RawQuery
	}
	h := w.Header()
	h.Set("Location", target)
	h["Cache-Control"] = noCacheValue
	w.WriteHeader(http.StatusPermanentRedirect)
}

// Live reports whether slug (or a preview label, "v12--my-site") names a
// site that is served right now. It reads through the same cache as
// ServeSite.
func (s *Server) Live(slug string) bool {
	site, err := s.site(slug)
	return err == nil && site.live(s.now())
}

// site returns slug's prepared site, from the cache or loaded (and then
// cached when no change raced the load). Requests that miss the cache
// together share one load (see loadShared). A site's rules are compiled
// once per rule set, not per load (see rulesOf).
func (s *Server) site(slug string) (*site, error) {
	if slug == "" {
		return nil, sites.ErrNotFound
	}
	if st, ok := s.cache.get(slug); ok {
		return st, nil
	}
	return s.loadShared(slug)
}

// loadShared loads slug once for every request that misses the cache
// while the load runs. Requests share a load only under the same cache
// generation: one that read the generation after a change began or ended
// never joins a load that may have read the state before it (so once a
// reader has seen the new site, none is handed the old one). The load
// outlives a caller that goes away (the others wait for it); it reads
// the site's record, and compiles no rules (see rulesOf).
func (s *Server) loadShared(slug string) (*site, error) {
	gen := s.cache.generation()
	key := slug + "\x00" + strconv.FormatUint(gen, 10)
	v, err, _ := s.loading.Do(key, func() (any, error) {
		if st, ok := s.cache.get(slug); ok {
			return st, nil // stored by a load of this generation that just ended
		}
		return s.loadSite(slug, gen)
	})
	if err != nil {
		return nil, err
	}
	return v.(*site), nil
}

// loadSite loads and prepares slug, and caches it unless a change raced
// the load (gen is the generation read before it). Its rules are
// compiled when a request first needs them, unless the rule cache holds
// them already (see rulesOf).
func (s *Server) loadSite(slug string, gen uint64) (*site, error) {
	loaded, err := s.load(slug)
	if err != nil {
		return nil, err
	}
	st := prepare(loaded)
	st.gate = newSiteGate(loaded.ID, loaded.Preview, loaded.Protection)
	if key, ok := ruleKeyOf(loaded.Files); ok {
		st.rules = &ruleRef{}
		st.rules.Store(s.ruleSets.entry(key))
	}
	s.cache.put(slug, st, gen, s.now())
	return st, nil
}

// ruleRef is a site's hold on its rule set: the entry of the rule cache,
// replaced when it was evicted and loaded again.
type ruleRef struct{ atomic.Pointer[ruleEntry] }

// noRules are the rules of a site without rule files.
var noRules = &siteRules{}

// rulesOf returns st's compiled rules: those its entry holds, or, when
// the rule cache has not got them yet, has evicted them or could not keep
// them, those it loads (compiling them once for every request and site
// that waits for the same set). Memory for rules is counted by the rule
// cache alone: the site cache counts a site without them.
func (s *Server) rulesOf(ctx context.Context, st *site, now time.Time) (*siteRules, error) {
	if st.rules == nil {
		return noRules, nil
	}
	e := st.rules.Load()
	if r := e.rules.Load(); r != nil {
		e.touch(now.UnixNano())
		return r, nil
	}
	r, fresh, err := s.ruleSets.load(ctx, e.key, now, s.compileRules)
	if err != nil {
		return nil, fmt.Errorf("load the rules of %s: %w", st.slug, err)
	}
	st.rules.CompareAndSwap(e, fresh)
	return r, nil
}

// compileRules compiles a rule set from the server's store.
func (s *Server) compileRules(ctx context.Context, key ruleKey) (*siteRules, error) {
	return compileRules(ctx, s.store, key)
}

// RefuseHost answers a request whose Host header is malformed: 400 in
// plain text, as the site server answers its errors (the request may have
// been meant for a site). Every listener answers such hosts this way.
func RefuseHost(w http.ResponseWriter) {
	plainError(w, http.StatusBadRequest, "Invalid Host header")
}

// RefuseUnknownHost answers a request for a well-formed host this server
// does not serve (no web host, site or custom domain of its own; a
// released custom domain whose DNS still points here, say): 421
// Misdirected Request with {"error": "unknown host"}, not cached. Such a
// host never gets the web host's pages, sign-in or dashboard.
func RefuseUnknownHost(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h["Cache-Control"] = noStoreValue
	w.WriteHeader(http.StatusMisdirectedRequest)
	_, _ = io.WriteString(w, `{"error":"unknown host"}`+"\n")
}

// plainError answers a short plain-text error that is not cached.
func plainError(w http.ResponseWriter, status int, msg string) {
	h := w.Header()
	h["Content-Type"] = plainTextValue
	h["Cache-Control"] = noStoreValue
	w.WriteHeader(status)
	_, _ = io.WriteString(w, msg+"\n")
}
