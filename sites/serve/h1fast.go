package serve

import (
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"sitedrop/sites/rules"
)

// The HTTP/1.1 fast answer (see HTTP1): a live, public site's file, 200
// or 304, its head written from the file's prepared header values.

// appendHead appends the fast path's head of rep, a representation of f,
// to b: what serveFile and net/http write for a 200 (or, notModified, a
// 304) to a GET on a public site's file, but for the Date line and the
// blank line, in net/http's order (sorted names), with the protocol
// proto ("HTTP/1.1" or "HTTP/1.0"). TestH1FastMatchesGeneral checks it
// against the general path's, which is net/http's byte for byte. It is
// built per answer, not kept per file: a few appends of prepared
// values, where a head kept for each representation of every cached
// file cost ~1.8 KB a file (RSS after serving 10,000 sites: 130 → 170+ MB).
func appendHead(b []byte, proto string, f *servedFile, rep *representation, notModified bool) []byte {
	b = append(b, proto...)
	if notModified {
		b = append(b, " 304 Not Modified\r\n"...)
	} else {
		b = append(b, " 200 OK\r\n"...)
	}
	b = appendField(b, "Cache-Control", f.cacheControl)
	if !notModified {
		if rep.encoding != nil {
			b = appendField(b, "Content-Encoding", rep.encoding)
		}
		b = appendField(b, "Content-Length", rep.length)
		b = appendField(b, "Content-Type", f.contentType)
	}
	b = appendField(b, "Etag", rep.etag)
	if f.encoded {
		b = appendField(b, "Vary", varyEncodingValue)
	}
	return appendField(b, "X-Content-Type-Options", nosniffValue)
}

// fastFile returns the site and file that answer path (a request path
// without escapes) with a 200 on the site label, when the fast path may
// answer it: a public, live site in the cache or loaded, not a preview,
// not paused, held, moved or taken down, a clean path, compiled rules
// that neither redirect the path nor add headers to it. Else nil, and
// the general path answers.
func (s *Server) fastFile(label, path, rawQuery string) (*site, *servedFile) {
	if isPreviewKey(label) {
		return nil, nil
	}
	st, err := s.site(label)
	if err != nil {
		return nil, nil
	}
	now := s.now()
	if !st.live(now) || st.takedown != nil || st.movedTo != "" || st.paused || st.awaitingClaim ||
		st.preview != "" || st.gate != nil {
		return nil, nil
	}
	if len(path) > maxRequestPath || !isCleanPath(path) {
		return nil, nil
	}
	var redirects *rules.Redirects
	if st.rules != nil {
		e := st.rules.Load()
		rs := e.rules.Load()
		if rs == nil {
			return nil, nil // the general path loads them
		}
		e.touch(now.UnixNano())
		if rs.headers != nil {
			if m := rs.headers.Match(path); len(m.Headers) > 0 || len(m.BasicAuth) > 0 {
				return nil, nil
			}
		}
		redirects = rs.redirects
	}
	res := resolvePath(st, redirects, path, rawQuery)
	if res.file == nil || res.status != http.StatusOK || res.redirect != "" || res.location != "" {
		return nil, nil
	}
	return st, res.file
}

// fast gives the fast answer to r when it can (done), and tells whether
// the connection stays open after it.
func (cn *h1conn) fast(s *Server, r *http.Request, start time.Time) (done, keep bool) {
	h := &cn.h
	if cn.path == "" {
		p, q, _ := strings.Cut(cn.target, "?")
		if strings.IndexByte(p, '%') >= 0 {
			return false, false
		}
		cn.path, cn.rawPath = p, q
	}
	hd := r.Header
	if len(hd["Range"]) > 0 {
		return false, false
	}
	st, f := s.fastFile(cn.label, cn.path, cn.rawPath)
	if f == nil {
		return false, false
	}
	rep := f.pick(hd["Accept-Encoding"])
	if rep.size > maxCachedFile {
		return false, false
	}
	status := http.StatusOK
	var data []byte
	if inm := hd["If-None-Match"]; len(inm) > 0 && etagMatches(inm, rep.hash) {
		status = http.StatusNotModified
	} else {
		var err error
		if data, err = s.content.load(cn.ctx, s.store, rep.hash); err != nil {
			return false, false // the general path answers its 500
		}
		if int64(len(data)) != rep.size {
			// a blob that is not the manifest's length: its head says
			// rep.size, and more or fewer bytes behind it would shift
			// the connection's next answers; the general path cuts the
			// answer and closes, as net/http does
			return false, false
		}
	}
	proto := "HTTP/1.1"
	if h.http10 {
		proto = "HTTP/1.0"
	}
	out := appendHead(cn.out, proto, f, rep, status == http.StatusNotModified)
	out = append(out, "Date: "...)
	out = append(out, cn.date...)
	if h.close && !h.http10 {
		out = append(out, "\r\nConnection: close\r\n\r\n"...)
	} else {
		out = append(out, "\r\n\r\n"...)
	}
	cn.out = out
	var n int64
	if status == http.StatusOK && !h.head {
		n = int64(len(data))
		switch {
		case len(data) <= h1CopyMax:
			cn.out = append(cn.out, data...)
		case len(data) >= h1SendfileMin && cn.sendFile(s, rep.hash, n):
		default:
			cn.writeTwo(data)
		}
	}
	if s.rec != nil {
		cn.url = url0
		cn.url.Path, cn.url.RawQuery = cn.path, cn.rawPath
		r.URL = &cn.url
		o := outcome{site: st.id, status: status, page: f.html}
		if status == http.StatusOK {
			o.bytes = rep.size
		}
		s.record(r, o)
	}
	if c := cn.s.o.Count; c != nil {
		c(status, n, time.Since(start))
	}
	return true, !h.close
}

// sendFile writes what out holds, then the blob hash's first n bytes
// with sendfile (see h1sendfile.go); false when it cannot: not a TCP
// connection (TLS), or not a blob file (an S3 store).
func (cn *h1conn) sendFile(s *Server, hash string, n int64) bool {
	cc, isConn := cn.c.(*Conn)
	tcp, isTCP := cn.c.(*net.TCPConn)
	if !isConn && !isTCP {
		return false
	}
	of := s.files.get(cn.ctx, s.store, hash)
	if of == nil {
		return false
	}
	defer of.release()
	cn.armWrite()
	var err error
	if isConn {
		err = cc.sendHeadFile(cn.out, of, n)
	} else {
		_, err = sendfile(tcp, cn.out, of, n)
	}
	cn.out = cn.out[:0]
	if err != nil {
		cn.werr = err
	}
	return true
}

// url0 is a zero URL, to reset the connection's.
var url0 url.URL
