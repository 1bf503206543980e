package serve

import (
	"io"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http/httpguts"
)

// h1Writer is the HTTP/1.1 fast path's http.ResponseWriter for the
// general path (the site handler, see HTTP1): it writes the answer as
// net/http's would, byte for byte (status line, the handler's headers in
// net/http's sorted order, then Date, Content-Length, a sniffed
// Content-Type, Connection and Transfer-Encoding as net/http adds them;
// the first 2 KiB of a body without a length held so that a short one
// gets a Content-Length, a longer one chunked), and gathers the head and
// the body into one write. One per connection, reset per request. It
// does not support Hijack or trailers (no site answer uses them).
type h1Writer struct {
	cn  *h1conn
	hdr http.Header

	status      int
	wroteHeader bool // WriteHeader was called (a final status)
	headSent    bool // the head is in out (net/http's cw.wroteHeader)
	handlerDone bool
	// contentLength is the declared or computed length, -1 unknown.
	contentLength int64
	written       int64
	chunking      bool
	closeAfter    bool
	head          bool // the request is HEAD
	http10        bool
	wantsClose    bool

	// pending is net/http's 2 KiB response buffer (bufferBeforeChunkingSize).
	pending []byte
	pendBuf [bufferBeforeChunking]byte
	// keys is reused to sort the header's keys.
	keys []string
}

// bufferBeforeChunking is net/http's bufferBeforeChunkingSize.
const bufferBeforeChunking = 2048

// reset prepares w for the answer to a request.
func (w *h1Writer) reset(h *h1Head) {
	clear(w.hdr)
	w.status, w.wroteHeader, w.headSent, w.handlerDone = 0, false, false, false
	w.contentLength, w.written, w.chunking, w.closeAfter = -1, 0, false, false
	w.head, w.http10, w.wantsClose = h.head, h.http10, h.close
	w.pending = w.pendBuf[:0]
}

// Header is the answer's header.
func (w *h1Writer) Header() http.Header { return w.hdr }

// WriteHeader sets the status (an informational one is sent at once).
func (w *h1Writer) WriteHeader(code int) {
	if w.wroteHeader {
		return // net/http logs a superfluous call
	}
	if code < 100 || code > 999 {
		panic("invalid WriteHeader code " + strconv.Itoa(code))
	}
	if code >= 100 && code <= 199 && code != http.StatusSwitchingProtocols {
		w.cn.out = appendStatusLine(w.cn.out, w.http10, code)
		w.cn.out = w.appendSortedExcept(w.cn.out, dropped{length: true, te: true}) // net/http's excludedHeadersNoBody
		w.cn.out = append(w.cn.out, "\r\n"...)
		w.cn.flushOut()
		return
	}
	w.wroteHeader, w.status = true, code
	if cl := w.hdr.Get("Content-Length"); cl != "" {
		v, err := strconv.ParseInt(cl, 10, 64)
		if err == nil && v >= 0 {
			w.contentLength = v
		} else {
			w.hdr.Del("Content-Length") // net/http logs a bad length and drops it
		}
	}
}

// Write writes body bytes, through net/http's 2 KiB buffer.
func (w *h1Writer) Write(p []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if len(p) == 0 {
		return 0, nil
	}
	if !h1BodyAllowed(w.status) {
		return 0, http.ErrBodyNotAllowed
	}
	w.written += int64(len(p))
	if w.contentLength != -1 && w.written > w.contentLength {
		return 0, http.ErrContentLength
	}
	// bufio.Writer.Write over chunkWrite
	nn := 0
	for len(p) > cap(w.pending)-len(w.pending) && w.cn.werr == nil {
		var n int
		if len(w.pending) == 0 {
			n = len(p)
			w.chunkWrite(p)
		} else {
			n = copy(w.pending[len(w.pending):cap(w.pending)], p)
			w.pending = w.pending[:len(w.pending)+n]
			w.flushPending()
		}
		nn += n
		p = p[n:]
	}
	if w.cn.werr != nil {
		return nn, w.cn.werr
	}
	w.pending = append(w.pending, p...)
	return nn + len(p), nil
}

// WriteString is Write.
func (w *h1Writer) WriteString(s string) (int, error) {
	// the copy is a small price: site answers write bytes
	return w.Write([]byte(s))
}

// flushPending passes what net/http's buffer holds on.
func (w *h1Writer) flushPending() {
	if len(w.pending) > 0 {
		w.chunkWrite(w.pending)
		w.pending = w.pending[:0]
	}
}

// chunkWrite is net/http's chunkWriter.Write: the head first (p is the
// first of the body, for sniffing and an automatic length), then p,
// framed when chunking, nothing for HEAD.
func (w *h1Writer) chunkWrite(p []byte) {
	if !w.headSent {
		w.writeHead(p)
	}
	if w.head {
		return
	}
	cn := w.cn
	if w.chunking {
		cn.out = strconv.AppendInt(cn.out, int64(len(p)), 16)
		cn.out = append(cn.out, "\r\n"...)
	}
	cn.writeBody(p)
	if w.chunking {
		cn.out = append(cn.out, "\r\n"...)
	}
}

// Flush sends what is written so far (a length-less answer goes chunked).
func (w *h1Writer) Flush() {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	w.flushPending()
	if !w.headSent {
		w.writeHead(nil)
	}
	w.cn.flushOut()
}

// ReadFrom copies src as net/http does: the first 512 bytes through Write
// (sniffing), then, for a file's body that is neither chunked nor HEAD's,
// the connection's own ReadFrom (sendfile). Any other reader (a Range
// answer from the cached bytes) goes through Write, so that the answer
// leaves in one write.
func (w *h1Writer) ReadFrom(src io.Reader) (int64, error) {
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	var n int64
	if !w.headSent {
		n0, err := io.CopyBuffer(writerOnly{w}, io.LimitReader(src, sniffLen), *bp)
		n += n0
		if err != nil || n0 < sniffLen {
			return n, err
		}
	}
	w.flushPending()
	if !w.headSent {
		w.writeHead(nil)
	}
	rf, ok := w.cn.c.(io.ReaderFrom)
	if ok && isFile(src) && !w.chunking && h1BodyAllowed(w.status) && !w.head {
		if err := w.cn.flushOut(); err != nil {
			return n, err
		}
		w.cn.armWrite()
		n0, err := rf.ReadFrom(src)
		n += n0
		w.written += n0
		if err != nil {
			w.cn.werr = err
		}
		return n, err
	}
	n0, err := io.CopyBuffer(writerOnly{w}, src, *bp)
	return n + n0, err
}

// sniffLen is net/http's: the bytes DetectContentType reads.
const sniffLen = 512

var copyBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// writerOnly hides a writer's ReadFrom from io.Copy.
type writerOnly struct{ io.Writer }

// finish ends the answer once the handler returned (net/http's
// finishRequest), and tells whether the connection may serve another
// request.
func (w *h1Writer) finish() (keepAlive bool) {
	w.handlerDone = true
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	w.flushPending()
	if !w.headSent {
		w.writeHead(nil)
	}
	if w.chunking {
		w.cn.out = append(w.cn.out, "0\r\n\r\n"...)
	}
	if w.closeAfter {
		return false
	}
	if !w.head && w.contentLength != -1 && h1BodyAllowed(w.status) && w.contentLength != w.written {
		return false
	}
	return true
}

// writeHead appends the head to the connection's output: net/http's
// chunkWriter.writeHeader for a request without a body, on a server with
// keep-alives.
func (w *h1Writer) writeHead(p []byte) {
	w.headSent = true
	h := w.hdr
	var drop dropped
	te := h.Get("Transfer-Encoding")
	hasTE := te != ""
	var setLength []byte
	var lenBuf [20]byte
	if w.handlerDone && !hasTE && h1BodyAllowed(w.status) && !has(h, "Content-Length") && (!w.head || len(p) > 0) {
		w.contentLength = int64(len(p))
		setLength = strconv.AppendInt(lenBuf[:0], int64(len(p)), 10)
	}
	hasCL := w.contentLength != -1
	if w.http10 || w.wantsClose {
		w.closeAfter = true
	}
	if h.Get("Connection") == "close" {
		w.closeAfter = true
	}
	var setType string
	if h1BodyAllowed(w.status) {
		_, haveType := h["Content-Type"]
		if h.Get("Content-Encoding") == "" && !haveType && !hasTE && len(p) > 0 {
			setType = http.DetectContentType(p)
		}
	} else {
		drop.length, drop.te = true, true
		if w.status == http.StatusNotModified {
			drop.ctype = true
		}
	}
	setDate := !has(h, "Date")
	if hasCL && hasTE && te != "identity" {
		drop.length, hasCL = true, false
	}
	var setTE string
	switch {
	case w.head || !h1BodyAllowed(w.status) || w.status == http.StatusNoContent:
		drop.te = true
	case hasCL:
		drop.te = true
	case !w.http10:
		if hasTE && te == "identity" {
			w.chunking, w.closeAfter, drop.te = false, true, true
		} else {
			w.chunking, setTE = true, "chunked"
			if hasTE && te == "chunked" {
				drop.te = true
			}
		}
	default:
		w.closeAfter, drop.te = true, true
	}
	if w.chunking {
		drop.length = true
	}
	var setConnection string
	if w.closeAfter && !hasToken(h.Get("Connection"), "close") && w.status != http.StatusSwitchingProtocols {
		drop.connection = true
		if !w.http10 {
			setConnection = "close"
		}
	}
	cn := w.cn
	cn.out = appendStatusLine(cn.out, w.http10, w.status)
	cn.out = w.appendSortedExcept(cn.out, drop)
	if setDate {
		cn.out = append(cn.out, "Date: "...)
		cn.out = append(cn.out, cn.date...)
		cn.out = append(cn.out, "\r\n"...)
	}
	if setLength != nil {
		cn.out = append(cn.out, "Content-Length: "...)
		cn.out = append(cn.out, setLength...)
		cn.out = append(cn.out, "\r\n"...)
	}
	for i, v := range [...]string{setType, setConnection, setTE} {
		if v != "" {
			cn.out = append(cn.out, extraHeaderKeys[i]...)
			cn.out = append(cn.out, ": "...)
			cn.out = append(cn.out, v...)
			cn.out = append(cn.out, "\r\n"...)
		}
	}
	cn.out = append(cn.out, "\r\n"...)
}

var extraHeaderKeys = [...]string{"Content-Type", "Connection", "Transfer-Encoding"}

// dropped are the handler's headers net/http leaves out of a head.
type dropped struct{ length, te, ctype, connection bool }

func (d dropped) has(k string) bool {
	switch k {
	case "Content-Length":
		return d.length
	case "Transfer-Encoding":
		return d.te
	case "Content-Type":
		return d.ctype
	case "Connection":
		return d.connection
	}
	return false
}

// appendSortedExcept appends the handler's header fields, sorted by name
// as net/http writes them, but those in d.
func (w *h1Writer) appendSortedExcept(b []byte, d dropped) []byte {
	w.keys = w.keys[:0]
	for k := range w.hdr {
		if d.has(k) {
			continue
		}
		w.keys = insertSorted(w.keys, k)
	}
	for _, k := range w.keys {
		b = appendField(b, k, w.hdr[k])
	}
	return b
}

// insertSorted inserts k in the sorted keys.
func insertSorted(keys []string, k string) []string {
	keys = append(keys, k)
	i := len(keys) - 1
	for ; i > 0 && keys[i-1] > k; i-- {
		keys[i] = keys[i-1]
	}
	keys[i] = k
	return keys
}

// appendField appends "key: value\r\n" for each value, as net/http's
// Header.Write: an invalid name is left out, line breaks in a value
// become spaces, and the value is trimmed.
func appendField(b []byte, k string, values []string) []byte {
	if !httpguts.ValidHeaderFieldName(k) {
		return b
	}
	for _, v := range values {
		if strings.ContainsAny(v, "\r\n") {
			v = strings.NewReplacer("\n", " ", "\r", " ").Replace(v)
		}
		v = textproto.TrimString(v)
		b = append(b, k...)
		b = append(b, ": "...)
		b = append(b, v...)
		b = append(b, "\r\n"...)
	}
	return b
}

// appendStatusLine is net/http's writeStatusLine.
func appendStatusLine(b []byte, http10 bool, code int) []byte {
	if http10 {
		b = append(b, "HTTP/1.0 "...)
	} else {
		b = append(b, "HTTP/1.1 "...)
	}
	if text := http.StatusText(code); text != "" {
		b = strconv.AppendInt(b, int64(code), 10)
		b = append(b, ' ')
		b = append(b, text...)
		return append(b, "\r\n"...)
	}
	// fmt's "%03d status code %d\r\n"
	if code < 100 {
		b = append(b, '0')
	}
	b = strconv.AppendInt(b, int64(code), 10)
	b = append(b, " status code "...)
	b = strconv.AppendInt(b, int64(code), 10)
	return append(b, "\r\n"...)
}

// has reports whether h has key (canonical), even empty.
func has(h http.Header, key string) bool {
	_, ok := h[key]
	return ok
}

// hasToken is net/http's: whether the comma-separated v holds token,
// case-insensitively.
func hasToken(v, token string) bool {
	if len(token) > len(v) || token == "" {
		return false
	}
	if v == token {
		return true
	}
	for sp := 0; sp <= len(v)-len(token); sp++ {
		if b := v[sp]; b != token[0] && b|0x20 != token[0] {
			continue
		}
		if sp > 0 && !isTokenBoundary(v[sp-1]) {
			continue
		}
		if endPos := sp + len(token); endPos != len(v) && !isTokenBoundary(v[endPos]) {
			continue
		}
		if strings.EqualFold(v[sp:sp+len(token)], token) {
			return true
		}
	}
	return false
}

func isTokenBoundary(b byte) bool { return b == ' ' || b == ',' || b == '\t' }

// h1BodyAllowed is net/http's.
func h1BodyAllowed(status int) bool {
	switch {
	case status >= 100 && status <= 199:
		return false
	case status == 204:
		return false
	case status == 304:
		return false
	}
	return true
}

// h1HTTPDate is the Date line's value at unix second sec.
func h1HTTPDate(sec int64) []byte {
	return time.Unix(sec, 0).UTC().AppendFormat(nil, http.TimeFormat)
}
