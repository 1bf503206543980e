package serve

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"sitedrop/sites"
	"sitedrop/sites/rules"
	"sitedrop/sites/store"
)

// Header values shared by every answer. net/http never modifies a header
// value slice, so the hot path assigns these instead of building new ones.
var (
	nosniffValue        = []string{"nosniff"}
	allowValue          = []string{"GET, HEAD"}
	noCacheValue        = []string{"no-cache"}
	noStoreValue        = []string{"no-store"}
	immutableValue      = []string{"public, max-age=31536000, immutable"}
	plainTextValue      = []string{"text/plain; charset=utf-8"}
	varyEncodingValue   = []string{"Accept-Encoding"}
	encodingHeaderValue = map[string][]string{
		sites.EncodingBrotli: {sites.EncodingBrotli},
		sites.EncodingZstd:   {sites.EncodingZstd},
		sites.EncodingGzip:   {sites.EncodingGzip},
	}
)

// servedFile is a manifest entry prepared for serving: its header values
// built once, and its representations (identity and precompressed).
type servedFile struct {
	contentType  []string
	cacheControl []string
	// reps[0] is the identity; reps[1+i] is EncodingPreference[i], when
	// present.
	reps [1 + len(sites.EncodingPreference)]representation
	// order lists the indexes in reps of the present representations,
	// smallest first (ties in reps order: the identity, then the
	// preferred coding); n is how many there are.
	order [1 + len(sites.EncodingPreference)]uint8
	n     uint8
	// encoded tells whether any variant exists (then answers Vary).
	encoded bool
	// html tells that the file is a page (for the Recorder).
	html bool
}

// representation is one form of a file's bytes.
type representation struct {
	present  bool
	hash     string
	size     int64
	etag     []string // `"<hash>"`
	length   []string // size, in decimal
	encoding []string // Content-Encoding; nil for the identity
}

func newRepresentation(hash string, size int64, coding string) representation {
	return representation{
		present:  true,
		hash:     hash,
		size:     size,
		etag:     []string{`"` + hash + `"`},
		length:   []string{strconv.FormatInt(size, 10)},
		encoding: encodingHeaderValue[coding],
	}
}

// prepare builds the served form of a loaded site: its files' header
// values and representations (the rule files left out, see ruleFile).
// The manifest is not kept: served holds all that serving needs, which
// halves the cached memory.
func prepare(l *sites.Site) *site {
	s := &site{
		id: l.ID, slug: l.Slug, versionID: l.VersionID, preview: l.Preview, isSPA: l.IsSPA,
		status: l.Status, expiresAt: l.ExpiresAt, paused: l.Paused, movedTo: l.MovedTo,
		awaitingClaim: l.AwaitingClaim,
		served:        make(map[string]*servedFile, len(l.Files)),
	}
	if l.TakenDown != "" {
		s.takedown = takedownPage(l.TakenDown)
		s.bytes = s.estimateCost() + int64(len(s.takedown))
		return s // its files are never served: not prepared
	}
	for p, e := range l.Files {
		if ruleFile(p) {
			continue // kept in the manifest, never served
		}
		f := &servedFile{contentType: []string{e.Type}, cacheControl: noCacheValue, html: isHTMLType(e.Type)}
		if Fingerprinted(p) && !f.html {
			f.cacheControl = immutableValue // a page is always revalidated
		}
		f.reps[0] = newRepresentation(e.Hash, e.Size, "")
		for i, coding := range sites.EncodingPreference {
			if v, ok := e.Encoded[coding]; ok {
				f.reps[1+i] = newRepresentation(v.Hash, v.Size, coding)
				f.encoded = true
			}
		}
		f.sortBySize()
		s.served[p] = f
	}
	s.bytes = s.estimateCost()
	return s
}

// ruleFile reports whether the manifest path p is one of the site's rule
// files at its root (_redirects, _headers). They configure the site and
// are never served: a request for one answers as if it were absent.
func ruleFile(p string) bool {
	return p == rules.RedirectsFile || p == rules.HeadersFile
}

// isHTMLType reports whether a Content-Type is an HTML page's.
func isHTMLType(contentType string) bool {
	mt, _, _ := strings.Cut(contentType, ";")
	mt = strings.TrimSpace(mt)
	return strings.EqualFold(mt, "text/html") || strings.EqualFold(mt, "application/xhtml+xml")
}

// cost is the memory a prepared site holds, as prepare estimated it.
func (s *site) cost() int64 { return s.bytes }

// estimateCost estimates the memory a prepared site holds, for the site
// cache's byte budget; prepare keeps it in bytes.
func (s *site) estimateCost() int64 {
	const perSite, perFile, perRep = 512, 256, 160
	n := int64(perSite)
	for p, f := range s.served {
		n += perFile + 2*int64(len(p))
		for _, r := range f.reps {
			if r.present {
				n += perRep
			}
		}
	}
	return n
}

// sortBySize fills order: the present representations, smallest first.
func (f *servedFile) sortBySize() {
	f.n = 0
	for i := range f.reps {
		if !f.reps[i].present {
			continue
		}
		j := f.n
		for ; j > 0 && f.reps[f.order[j-1]].size > f.reps[i].size; j-- {
			f.order[j] = f.order[j-1] // insertion sort: stable, at most 4
		}
		f.order[j] = uint8(i)
		f.n++
	}
}

// pick returns the representation to send for an Accept-Encoding header:
// the smallest the client accepts (see acceptedCodings), or the identity
// when it accepts none.
func (f *servedFile) pick(acceptEncoding []string) *representation {
	if f.encoded && len(acceptEncoding) > 0 {
		accepted := acceptedCodings(acceptEncoding)
		for _, i := range f.order[:f.n] {
			if accepted&(1<<i) != 0 {
				return &f.reps[i]
			}
		}
	}
	return &f.reps[0]
}

// maxCachedFile is the largest file whose bytes are kept in memory;
// larger ones are sent from disk with sendfile.
const maxCachedFile = 1 << 20

// serveFile answers with f: status 200, or 404 for a site's own 404.html
// (which has no ETag, conditional or range handling). It returns the
// status answered and the body's length (for a range, the length net/http
// announced).
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request, f *servedFile, status int) (int, int64) {
	rep := f.pick(r.Header["Accept-Encoding"])
	h := w.Header()
	if f.encoded {
		h["Vary"] = varyEncodingValue
	}
	if status == http.StatusOK {
		h["Cache-Control"] = f.cacheControl
		h["Etag"] = rep.etag
		if inm := r.Header["If-None-Match"]; len(inm) > 0 && etagMatches(inm, rep.hash) {
			w.WriteHeader(http.StatusNotModified)
			return http.StatusNotModified, 0
		}
	} else {
		h["Cache-Control"] = noCacheValue
	}
	h["Content-Type"] = f.contentType
	if rep.encoding != nil {
		h["Content-Encoding"] = rep.encoding
	}

	var data []byte
	if rep.size <= maxCachedFile {
		var err error
		if data, err = s.content.load(r.Context(), s.store, rep.hash); err != nil {
			internalError(w)
			return http.StatusInternalServerError, 0
		}
	}
	if status == http.StatusOK && len(r.Header["Range"]) > 0 && !tooManyRanges(r.Header["Range"]) {
		s.serveRange(w, r, rep, data)
		n, _ := strconv.ParseInt(firstValue(h["Content-Length"]), 10, 64)
		return http.StatusPartialContent, n
	}
	h["Content-Length"] = rep.length
	if data != nil {
		w.WriteHeader(status)
		if r.Method != http.MethodHead {
			_, _ = w.Write(data)
		}
		return status, rep.size
	}
	blob, err := s.store.Open(r.Context(), rep.hash)
	if err != nil {
		internalError(w)
		return http.StatusInternalServerError, 0
	}
	defer blob.Close()
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		// the length its head says, whatever the blob's (an *os.File
		// under a LimitedReader: still sendfile): more would be read as
		// the connection's next answer, fewer closes it
		_, _ = io.CopyN(w, blobBody(blob), rep.size)
	}
	return status, rep.size
}

// maxRanges is the most ranges a Range request is answered with: past
// it the Range is ignored and the whole file sent (RFC 9110, 14.2), as
// each range of a file read from the store is a request to it (a ranged
// GET on S3), and a Range header can list tens of thousands.
const maxRanges = 16

// tooManyRanges reports whether the Range header values list more than
// maxRanges ranges.
func tooManyRanges(values []string) bool {
	n := 0
	for _, v := range values {
		n += strings.Count(v, ",") + 1
	}
	return n > maxRanges
}

// serveRange answers a Range request with net/http's implementation
// (multiple ranges, If-Range), over the cached bytes or the file.
func (s *Server) serveRange(w http.ResponseWriter, r *http.Request, rep *representation, data []byte) {
	if data != nil {
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(data))
		return
	}
	blob, err := s.store.Open(r.Context(), rep.hash)
	if err != nil {
		internalError(w)
		return
	}
	defer blob.Close()
	http.ServeContent(w, r, "", time.Time{}, blobBody(blob))
}

// blobBody is what a blob's answer is copied from: a file store's open
// file itself, which the connection hands to the kernel (sendfile), or
// the blob.
func blobBody(blob store.Blob) io.ReadSeeker {
	if f, ok := blob.(store.FileBlob); ok {
		return f.OSFile()
	}
	return blob
}

// internalError answers 500 after a file's headers were set: a missing or
// unreadable blob.
func internalError(w http.ResponseWriter) {
	h := w.Header()
	for _, k := range []string{"Content-Encoding", "Etag", "Vary"} { // http.Error drops Content-Length
		delete(h, k)
	}
	h["Cache-Control"] = noStoreValue
	http.Error(w, "Internal error", http.StatusInternalServerError)
}
