package serve

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"sitedrop/sites"
	"sitedrop/sites/rules"
	"sitedrop/sites/store"
)

// siteRules are a rule set compiled: a version's _redirects and
// _headers (nil: it has none), from its own files, so a rollback brings
// back the rules of its time. Sites hold them through the rule cache
// (see ruleEntry); they are never changed once compiled.
type siteRules struct {
	redirects *rules.Redirects
	headers   *rules.Headers
	// bytes is the memory they hold, estimated for the rule cache.
	bytes int64
}

// Estimated memory of compiled rules: per redirect rule (its compiled
// pattern and index entries; measured at 170 to 220 bytes) on top of the
// text it keeps, and per byte of a _headers file (its blocks are kept
// about as written).
const (
	perRedirectRule = 256
	perHeadersByte  = 3
)

// maxRuleSetBytes is the most a compiled rule set is estimated at: the
// largest plan's bytes all in _headers, or its bytes and rules all in
// _redirects (about 7 MiB).
var maxRuleSetBytes = func() int64 {
	l := sites.MaxRuleLimit()
	return max(l.Bytes*perHeadersByte, l.Bytes+int64(l.Rules)*perRedirectRule)
}()

// ruleKeyOf is the rule set of manifest m, and whether it has one.
func ruleKeyOf(m sites.Manifest) (ruleKey, bool) {
	var k ruleKey
	if e, ok := m[rules.RedirectsFile]; ok {
		k.redirects = e.Hash
	}
	if e, ok := m[rules.HeadersFile]; ok {
		k.headers = e.Hash
	}
	return k, k != ruleKey{}
}

// compileRules reads and compiles the rule files of key. The lines that
// do not parse were reported at deploy (see sites.CheckRules); here they
// are skipped. What is read is bounded by sites.MaxRuleLimit, the largest
// any plan allows, for the two files together as a deploy's limit is,
// whatever they hold (a version stored before the limits, or under a plan
// its owner has left): _headers first (its Basic-Auth must not be what is
// left out), then as much of _redirects as the limit leaves, each cut at
// a line, and as many rules (_headers blocks and redirect rules together).
// So what a rule set costs to compile, and to hold while it is cached,
// is bounded too.
func compileRules(ctx context.Context, blobs store.BlobStore, key ruleKey) (*siteRules, error) {
	out := &siteRules{}
	limit := sites.MaxRuleLimit()
	bytesLeft, rulesLeft := limit.Bytes, limit.Rules
	if key.headers != "" {
		data, err := readBlob(ctx, blobs, key.headers, bytesLeft)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", rules.HeadersFile, err)
		}
		bytesLeft -= int64(len(data))
		hs, _ := rules.ParseHeaders(data)
		hs = hs[:min(len(hs), rulesLeft)]
		rulesLeft -= len(hs)
		if len(hs) > 0 {
			out.headers = rules.CompileHeaders(hs)
			out.bytes += int64(len(data)) * perHeadersByte
		}
	}
	if key.redirects != "" && bytesLeft > 0 && rulesLeft > 0 {
		data, err := readBlob(ctx, blobs, key.redirects, bytesLeft)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", rules.RedirectsFile, err)
		}
		rs, _ := rules.ParseRedirectsN(data, rulesLeft)
		if len(rs) > 0 {
			out.redirects = rules.CompileRedirects(rs)
			out.bytes += int64(len(data)) + int64(len(rs))*perRedirectRule
		}
	}
	return out, nil
}

// readBlob reads the first limit bytes of a blob, cut after its last
// whole line when the blob is longer.
func readBlob(ctx context.Context, blobs store.BlobStore, hash string, limit int64) ([]byte, error) {
	b, err := blobs.Open(ctx, hash)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	n := b.Size()
	if n > limit {
		n = limit
	}
	data := make([]byte, n)
	if _, err := io.ReadFull(b, data); err != nil {
		return nil, err
	}
	if b.Size() > limit {
		data = data[:bytes.LastIndexByte(data, '\n')+1]
	}
	return data, nil
}

// pathHeaders are the _headers that apply to one request path.
type pathHeaders struct {
	rules.Matched
}

// protected reports whether the path asks for HTTP Basic auth.
func (ph pathHeaders) protected() bool { return len(ph.BasicAuth) > 0 }

// authorized reports whether r carries credentials the path accepts.
func (ph pathHeaders) authorized(r *http.Request) bool {
	user, password, ok := r.BasicAuth()
	return ok && ph.Authorized(user, password)
}

// apply sets the site's headers on h, over sitedrop's defaults (the
// headers a site may not set were refused when the file was parsed).
func (ph pathHeaders) apply(h http.Header) {
	for _, x := range ph.Headers {
		h.Set(x.Name, x.Value)
	}
}

var privateValue = []string{"private"}

// privateDefaults are the private forms of the Cache-Control values
// sitedrop itself sets, made once: every answer of a protected site is
// made private, and most carry one of these.
var privateDefaults = func() map[string][]string {
	m := map[string][]string{}
	for _, v := range [][]string{noCacheValue, noStoreValue, immutableValue} {
		m[v[0]] = []string{privateCacheControl(v[0])}
	}
	return m
}()

// makePrivate keeps a shared cache from storing the answer whose header
// is h: its Cache-Control gets "private" in front (see
// privateCacheControl), or, with none and orSet, becomes "private"; the
// headers only a CDN reads are dropped.
func makePrivate(h http.Header, orSet bool) {
	if cc := h["Cache-Control"]; len(cc) > 0 {
		if p, ok := privateDefaults[cc[0]]; ok && len(cc) == 1 {
			h["Cache-Control"] = p
		} else {
			h["Cache-Control"] = []string{privateCacheControl(strings.Join(cc, ", "))}
		}
	} else if orSet {
		h["Cache-Control"] = privateValue
	}
	dropSharedCacheHeaders(h)
}

// sharedCacheHeaders are the headers that tell a CDN, and only a CDN,
// how long to keep an answer, whatever Cache-Control says.
var sharedCacheHeaders = []string{"Cdn-Cache-Control", "Cloudflare-Cdn-Cache-Control", "Surrogate-Control"}

// dropSharedCacheHeaders removes from h what would let a CDN keep an
// answer that must stay private (a site's _headers may set them).
func dropSharedCacheHeaders(h http.Header) {
	for _, name := range sharedCacheHeaders {
		delete(h, name)
	}
}

// privateCacheControl makes a Cache-Control value safe for an answer to
// a request with credentials: the directives that let a shared cache
// store it (RFC 9111 section 3.5: public, s-maxage, must-revalidate,
// proxy-revalidate) are dropped and "private" leads.
func privateCacheControl(cc string) string {
	out := []string{"private"}
	for _, d := range strings.Split(cc, ",") {
		d = strings.TrimSpace(d)
		name, _, _ := strings.Cut(strings.ToLower(d), "=")
		switch name {
		case "", "public", "private", "s-maxage", "must-revalidate", "proxy-revalidate":
			continue
		}
		out = append(out, d)
	}
	return strings.Join(out, ", ")
}

// basicAuthRealmValue is the challenge of a path under Basic auth.
var basicAuthRealmValue = []string{`Basic realm="site", charset="UTF-8"`}

// askForCredentials answers 401 with a Basic challenge.
func askForCredentials(w http.ResponseWriter) {
	w.Header()["Www-Authenticate"] = basicAuthRealmValue
	plainError(w, http.StatusUnauthorized, "Authentication required")
}

// safeLocation keeps a rule's target on the site when it is a path: a
// target that starts with two slashes (or a slash and a backslash), which
// a splat can produce from a request such as /go//evil.example, would be
// read by browsers as another host.
func safeLocation(to string) string {
	if len(to) > 1 && to[0] == '/' && (to[1] == '/' || to[1] == '\\') {
		return "/" + strings.TrimLeft(to, `/\`)
	}
	return to
}

// ruleAnswer is what a matched redirect rule answers: a redirect to
// m.To, or (200, 404, 410) the file at m.Path with the rule's status.
// A rule that serves a missing file answers like a missing path: the
// site's 404.html, or the default page, with the rule's status when it
// is an error.
func ruleAnswer(st *site, m rules.Match) resolved {
	if m.Path == "" {
		return resolved{location: safeLocation(m.To), status: m.Status}
	}
	if f := lookupFile(st, m.Path); f != nil {
		return resolved{file: f, status: m.Status}
	}
	res := st.missing()
	if m.Status != http.StatusOK {
		res.status = m.Status
	}
	return res
}

// lookupFile finds the file a site path names, with no redirect: the
// exact file, then path.html, then path/index.html ("/" is index.html).
// It is how a rewrite reaches its target.
func lookupFile(st *site, reqPath string) *servedFile {
	p := cleanRequestPath(reqPath)
	if p == "" {
		return st.served["index.html"]
	}
	if strings.HasSuffix(reqPath, "/") { // /about/ is about/index.html first, as served
		if f := st.served[p+"/index.html"]; f != nil {
			return f
		}
	}
	for _, name := range [...]string{p, p + ".html", p + "/index.html"} {
		if f := st.served[name]; f != nil {
			return f
		}
	}
	return nil
}

// headerWriter changes the response's header just before it is
// written, so that the changes come after (and win over) sitedrop's
// defaults: it sets a path's _headers (ph), and makes the answer private
// under Basic auth (whoever set its Cache-Control: see
// privateCacheControl) and on a protected site (private: "private" even
// with no Cache-Control). It forwards ReadFrom, so files are still sent
// with sendfile.
type headerWriter struct {
	http.ResponseWriter
	ph      pathHeaders
	private bool
	// noindex keeps X-Robots-Tag: noindex over the site's own headers (a
	// preview host, see sites.Site.Preview).
	noindex bool
	written bool
}

func (w *headerWriter) WriteHeader(status int) {
	if !w.written {
		w.written = true
		h := w.Header()
		w.ph.apply(h)
		if w.noindex {
			h["X-Robots-Tag"] = noindexValue
		}
		if w.private || w.ph.protected() {
			makePrivate(h, w.private) // once, on a protected site under Basic auth too
		}
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *headerWriter) Write(p []byte) (int, error) {
	if !w.written {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(p)
}

// ReadFrom sends r through the underlying writer's ReadFrom (sendfile).
func (w *headerWriter) ReadFrom(r io.Reader) (int64, error) {
	if !w.written {
		w.WriteHeader(http.StatusOK)
	}
	return io.Copy(w.ResponseWriter, r)
}

// Unwrap gives http.ResponseController the underlying writer.
func (w *headerWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
