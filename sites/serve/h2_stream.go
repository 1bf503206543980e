package serve

import (
	"errors"
	"net/http"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/net/http/httpguts"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// h2Stream is a request on an HTTP/2 connection and the ResponseWriter
// of its answer. The loop reuses one for every answer it gives inline;
// one that outlives its turn (a body to wait for, a stream that went on
// on its own goroutine) keeps it, and the loop takes a new one.
type h2Stream struct {
	c       *h2Conn
	id      uint32
	handler http.Handler

	// The request, reused.
	req       http.Request
	reqHeader http.Header
	url       url.URL
	vals      []string // backing of the header values
	cookies   []string

	// The request body (a gate form's), under c.mu once in streams.
	waitBody   bool
	remoteOpen bool // the peer may send more on the stream
	body       []byte
	bodySeen   int64
	declLen    int64 // the request's content-length, -1: none
	recvWindow int32
	bodyDue    time.Time // when the body must have come

	// The response, written by the handler's goroutine.
	header      http.Header
	status      int
	wroteHeader bool
	sentHeader  bool
	ended       bool // END_STREAM sent
	isHead      bool
	sentLen     int64 // the content-length sent, -1: none
	wrote       int64
	hold        []byte // the body held before the headers (h2HoldMax)
	own         bool   // answered on a goroutine of its own
	turn        int    // bytes sent inline
	aborted     bool   // the handler panicked: reset
	// loopReady is closed once the loop started when the stream went
	// on on its own has answered the requests read with it.
	loopReady chan struct{}

	// Under c.mu.
	sendWindow int64
	reset      bool
	inMap      bool
}

func newH2Stream(c *h2Conn) *h2Stream {
	return &h2Stream{c: c, reqHeader: http.Header{}, header: http.Header{}}
}

// reuse readies st for stream id.
func (st *h2Stream) reuse(id uint32) {
	st.id = id
	st.handler = nil
	clear(st.reqHeader)
	clear(st.header)
	st.vals = st.vals[:0]
	st.cookies = st.cookies[:0]
	st.waitBody, st.remoteOpen = false, false
	st.body, st.bodySeen, st.declLen, st.recvWindow = nil, 0, -1, h2InitialWindow
	st.status, st.wroteHeader, st.sentHeader, st.ended, st.isHead = 0, false, false, false, false
	st.sentLen, st.wrote, st.hold, st.own, st.turn, st.aborted = -1, 0, st.hold[:0], false, 0, false
	st.loopReady = nil
	st.reset, st.inMap = false, false
}

// addHeader adds a request header field (name lowercase and valid).
func (st *h2Stream) addHeader(name, value string) {
	key := canonicalRequestKey(name)
	if key == "Cookie" {
		st.cookies = append(st.cookies, value)
		return
	}
	if old, ok := st.reqHeader[key]; ok {
		st.reqHeader[key] = append(old, value)
		return
	}
	i := len(st.vals)
	st.vals = append(st.vals, value)
	st.reqHeader[key] = st.vals[i : i+1 : i+1]
}

// fillRequest makes st.req from the block's pseudo-headers and the
// header fields added, as net/http's HTTP/2 server does.
func (st *h2Stream) fillRequest(b *h2Block) error {
	c := st.c
	h := st.reqHeader
	switch len(st.cookies) {
	case 0:
	case 1:
		h["Cookie"] = st.cookies[:1:1]
	default:
		h["Cookie"] = []string{strings.Join(st.cookies, "; ")}
	}
	authority := b.authority
	if authority == "" {
		if v := h["Host"]; len(v) > 0 {
			authority = v[0]
		}
	}
	if strings.IndexByte(authority, '@') >= 0 && (b.scheme == "http" || b.scheme == "https") {
		return errors.New("userinfo in :authority")
	}
	requestURI := b.path
	if b.method == http.MethodConnect {
		st.url = url.URL{Host: authority}
		requestURI = authority
	} else if err := parseRequestPath(&st.url, b.path); err != nil {
		return err
	}
	delete(h, "Expect")
	delete(h, "Trailer")
	r := &st.req
	*r = c.tmpl
	r.Method = b.method
	r.URL = &st.url
	r.Proto, r.ProtoMajor, r.ProtoMinor = "HTTP/2.0", 2, 0
	r.Header = h
	r.Body = http.NoBody
	r.Host = authority
	r.RemoteAddr = c.remoteAddr
	r.RequestURI = requestURI
	if b.scheme == "https" {
		r.TLS = c.tlsState
	}
	if !b.endStream {
		r.ContentLength = -1
		if v, ok := h["Content-Length"]; ok {
			r.ContentLength = 0
			if n, err := strconv.ParseUint(v[0], 10, 63); err == nil {
				r.ContentLength = int64(n)
				st.declLen = int64(n)
			}
		}
	}
	st.isHead = b.method == http.MethodHead
	return nil
}

// parseRequestPath sets u from a request's :path, as
// url.ParseRequestURI does, without its allocations for the common
// path (no escapes, no characters it would escape).
func parseRequestPath(u *url.URL, p string) error {
	path, query, hasQuery := strings.Cut(p, "?")
	if plainPath(path) && !hasCTL(query) {
		*u = url.URL{Path: path, RawQuery: query, ForceQuery: hasQuery && query == ""}
		return nil
	}
	v, err := url.ParseRequestURI(p)
	if err != nil {
		return err
	}
	*u = *v
	return nil
}

// plainPath reports whether p starts with "/" and holds only bytes a
// URL path keeps as they are: its unescaped and escaped forms are p.
func plainPath(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	for i := 0; i < len(p); i++ {
		ch := p[i]
		switch {
		case 'a' <= ch && ch <= 'z', 'A' <= ch && ch <= 'Z', '0' <= ch && ch <= '9':
		case strings.IndexByte("-_.~$&+,/:;=@", ch) >= 0:
		default:
			return false
		}
	}
	return true
}

// hasCTL reports whether s holds an ASCII control character, which
// url.Parse refuses.
func hasCTL(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] == 0x7f {
			return true
		}
	}
	return false
}

// The ResponseWriter.

// Header is the response's header map.
func (st *h2Stream) Header() http.Header { return st.header }

// WriteHeader keeps the status; the headers go with the first chunk of
// the body, or at the end (as net/http's HTTP/2 server does, so that a
// small body gets its content-length).
func (st *h2Stream) WriteHeader(code int) {
	if st.wroteHeader {
		return
	}
	if code < 100 || code > 999 {
		panic("invalid WriteHeader code " + strconv.Itoa(code))
	}
	if code < 200 {
		st.writeInformational(code)
		return
	}
	st.wroteHeader = true
	st.status = code
}

// Write sends p as the body, after the headers.
func (st *h2Stream) Write(p []byte) (int, error) {
	if !st.wroteHeader {
		st.WriteHeader(http.StatusOK)
	}
	if !bodyAllowedForStatus(st.status) {
		return 0, http.ErrBodyNotAllowed
	}
	st.wrote += int64(len(p))
	if st.sentHeader && st.sentLen >= 0 && st.wrote > st.sentLen {
		return 0, errors.New("http2: handler wrote more than declared Content-Length")
	}
	if !st.sentHeader {
		if len(st.hold)+len(p) <= h2HoldMax {
			st.hold = append(st.hold, p...)
			return len(p), nil
		}
		sniff := p // the body's start, for a sniffed content-type
		if len(st.hold) > 0 {
			sniff = st.hold
			if len(sniff) < 512 {
				sniff = append(sniff[:len(sniff):len(sniff)], p[:min(len(p), 512-len(sniff))]...)
			}
		}
		c := st.c
		c.mu.Lock()
		err := st.sendHeadersLocked(sniff, false)
		if err == nil && len(st.hold) > 0 && !st.isHead {
			err = st.writeDataLocked(st.hold, false)
		}
		st.hold = st.hold[:0]
		if err == nil && !st.isHead {
			err = st.writeDataLocked(p, st.sentLen >= 0 && st.wrote == st.sentLen)
		}
		if st.own {
			_ = c.flushLocked()
		}
		c.mu.Unlock()
		if err != nil {
			return 0, err
		}
		return len(p), nil
	}
	if st.isHead {
		return len(p), nil
	}
	c := st.c
	c.mu.Lock()
	err := st.writeDataLocked(p, st.sentLen >= 0 && st.wrote == st.sentLen)
	if st.own {
		_ = c.flushLocked()
	}
	if st.own {
		st.yieldLocked()
	}
	c.mu.Unlock()
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// WriteString is Write of s.
func (st *h2Stream) WriteString(s string) (int, error) {
	if !st.sentHeader && len(st.hold)+len(s) <= h2HoldMax && st.wroteHeader && bodyAllowedForStatus(st.status) {
		st.wrote += int64(len(s))
		st.hold = append(st.hold, s...)
		return len(s), nil
	}
	return st.Write([]byte(s))
}

// Flush sends the headers and what is held.
func (st *h2Stream) Flush() {
	if !st.wroteHeader {
		st.WriteHeader(http.StatusOK)
	}
	c := st.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if !st.sentHeader {
		if st.sendHeadersLocked(st.hold, false) != nil {
			return
		}
		if len(st.hold) > 0 && !st.isHead {
			_ = st.writeDataLocked(st.hold, false)
		}
		st.hold = st.hold[:0]
	}
	if st.own {
		_ = c.flushLocked()
	}
}

// finish ends the stream once its handler returned: the headers if not
// sent, what is held, END_STREAM; then the stream is closed.
func (st *h2Stream) finish() {
	c := st.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if !st.aborted && !st.reset {
		if !st.wroteHeader {
			st.wroteHeader, st.status = true, http.StatusOK
		}
		var err error
		if !st.sentHeader {
			err = st.sendHeadersLocked(st.hold, true)
			if err == nil && !st.ended {
				err = st.writeDataLocked(st.hold, true)
			}
		} else if !st.ended {
			err = st.writeDataLocked(nil, true)
		}
		if err == nil && st.remoteOpen {
			// answered before the request's end: the peer stops sending
			c.resetLocked(st.id, http2.ErrCodeNo)
			c.recent[c.recentNext] = st.id
			c.recentNext = (c.recentNext + 1) % len(c.recent)
		}
	}
	st.hold = st.hold[:0]
	if st.inMap {
		delete(c.streams, st.id)
		st.inMap = false
	}
	if st.own {
		_ = c.flushLocked()
	}
	c.activeDoneLocked(!st.own)
}

// sendHeadersLocked sends the response's HEADERS. chunk is the start of
// the body (for the sniffed content-type and, when done, the
// content-length), as net/http's writeChunk sees it.
func (st *h2Stream) sendHeadersLocked(chunk []byte, done bool) error {
	c := st.c
	st.sentHeader = true
	h := st.header
	status := st.status
	var clen string
	if v := h["Content-Length"]; len(v) > 0 && v[0] != "" {
		if n, err := strconv.ParseUint(v[0], 10, 63); err == nil {
			clen, st.sentLen = v[0], int64(n)
		}
	}
	_, hasCL := h["Content-Length"]
	hasCL = hasCL && (len(h["Content-Length"]) == 0 || h["Content-Length"][0] == "")
	allowed := bodyAllowedForStatus(status)
	if clen == "" && !hasCL && done && allowed && (len(chunk) > 0 || !st.isHead) {
		clen = strconv.Itoa(len(chunk))
		st.sentLen = int64(len(chunk))
	}
	var ctype string
	if _, ok := h["Content-Type"]; !ok && allowed && len(chunk) > 0 {
		if ce := h["Content-Encoding"]; len(ce) == 0 || ce[0] == "" {
			ctype = http.DetectContentType(chunk)
		}
	}
	endStream := done && len(chunk) == 0 || st.isHead
	if c.err != nil {
		return c.err
	}
	if st.reset {
		return errH2StreamReset
	}
	c.hbuf.Reset()
	enc := c.henc
	_ = enc.WriteField(hpack.HeaderField{Name: ":status", Value: statusText(status)})
	for k, vv := range h {
		switch k {
		case "Content-Length", "Connection", "Keep-Alive", "Proxy-Connection", "Upgrade":
			continue
		}
		if strings.HasPrefix(k, http.TrailerPrefix) {
			continue
		}
		lk, ok := lowerResponseKey(k)
		if !ok {
			continue
		}
		isTE := lk == "transfer-encoding"
		for _, v := range vv {
			if !httpguts.ValidHeaderFieldValue(v) || isTE && v != "trailers" {
				continue
			}
			_ = enc.WriteField(hpack.HeaderField{Name: lk, Value: v})
		}
	}
	if ctype != "" {
		_ = enc.WriteField(hpack.HeaderField{Name: "content-type", Value: ctype})
	}
	if clen != "" {
		_ = enc.WriteField(hpack.HeaderField{Name: "content-length", Value: clen})
	}
	if _, ok := h["Date"]; !ok {
		_ = enc.WriteField(hpack.HeaderField{Name: "date", Value: httpDate()})
	}
	c.writeHeaderBlockLocked(st.id, c.hbuf.Bytes(), endStream)
	if endStream {
		st.ended = true
	}
	return nil
}

// writeInformational sends a 1xx response's HEADERS at once.
func (st *h2Stream) writeInformational(code int) {
	c := st.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil || st.reset {
		return
	}
	c.hbuf.Reset()
	_ = c.henc.WriteField(hpack.HeaderField{Name: ":status", Value: statusText(code)})
	for k, vv := range st.header {
		if k == "Content-Length" || k == "Transfer-Encoding" || k == "Connection" {
			continue
		}
		if lk, ok := lowerResponseKey(k); ok {
			for _, v := range vv {
				if httpguts.ValidHeaderFieldValue(v) {
					_ = c.henc.WriteField(hpack.HeaderField{Name: lk, Value: v})
				}
			}
		}
	}
	c.writeHeaderBlockLocked(st.id, c.hbuf.Bytes(), false)
	if st.own {
		_ = c.flushLocked()
	}
}

// writeHeaderBlockLocked sends a header block as HEADERS and, past the
// peer's frame size, CONTINUATION frames.
func (c *h2Conn) writeHeaderBlockLocked(id uint32, block []byte, endStream bool) {
	maxFrame := min(c.peerMaxFrame, h2MaxFrame)
	first := true
	for first || len(block) > 0 {
		n := min(len(block), maxFrame)
		var flags http2.Flags
		t := http2.FrameContinuation
		if first {
			t = http2.FrameHeaders
			if endStream {
				flags |= http2.FlagHeadersEndStream
			}
		}
		if n == len(block) {
			flags |= http2.FlagHeadersEndHeaders
		}
		if c.full(9 + n) {
			_ = c.flushLocked()
		}
		c.frameHeaderLocked(n, t, flags, id)
		c.wbuf = append(c.wbuf, block[:n]...)
		block = block[n:]
		first = false
	}
}

// writeDataLocked sends p as DATA frames within the peer's windows and
// frame size, END_STREAM on the last when end. A stream answered inline
// that finds no window, or that has had its turn, goes on on this
// goroutine (detachLocked); a stream on its own goroutine waits for
// window (flushing first), at most the write timeout.
func (st *h2Stream) writeDataLocked(p []byte, end bool) error {
	c := st.c
	maxFrame := min(c.peerMaxFrame, h2MaxFrame)
	for {
		if c.err != nil {
			return c.err
		}
		if st.reset {
			return errH2StreamReset
		}
		if len(p) == 0 {
			if end {
				if c.full(9) {
					if err := c.flushLocked(); err != nil {
						return err
					}
				}
				c.frameHeaderLocked(0, http2.FrameData, http2.FlagDataEndStream, st.id)
				st.ended = true
			}
			return nil
		}
		n := int64(min(len(p), maxFrame))
		n = min(n, st.sendWindow, c.sendWindow)
		if n <= 0 {
			if err := st.waitWindowLocked(); err != nil {
				return err
			}
			continue
		}
		if c.full(9 + int(n)) {
			if err := c.flushLocked(); err != nil {
				return err
			}
			if st.own {
				st.yieldLocked()
				continue
			}
		}
		last := end && int(n) == len(p)
		var flags http2.Flags
		if last {
			flags = http2.FlagDataEndStream
		}
		c.frameHeaderLocked(int(n), http2.FrameData, flags, st.id)
		c.wbuf = append(c.wbuf, p[:n]...)
		st.sendWindow -= n
		c.sendWindow -= n
		p = p[n:]
		if last {
			st.ended = true
			return nil
		}
		if !st.own {
			st.turn += int(n)
			if st.turn > h2TurnBytes && len(p) > 0 {
				c.detachLocked(st)
			}
		}
	}
}

// yieldLocked lets the loop and the other streams in between the
// writes of a stream on its own goroutine: the first time, until the
// loop it started has answered what was read with it.
func (st *h2Stream) yieldLocked() {
	c := st.c
	c.mu.Unlock()
	if st.loopReady != nil {
		<-st.loopReady
		st.loopReady = nil
	} else {
		runtime.Gosched()
	}
	c.mu.Lock()
}

// waitWindowLocked waits for the peer to open its window, the stream
// to be reset or the connection to end.
func (st *h2Stream) waitWindowLocked() error {
	c := st.c
	if !st.own {
		c.detachLocked(st)
	}
	if err := c.flushLocked(); err != nil {
		return err
	}
	var timedOut atomic.Bool
	t := time.AfterFunc(c.srv.o.WriteTimeout, func() {
		timedOut.Store(true)
		c.mu.Lock()
		c.cond.Broadcast()
		c.mu.Unlock()
	})
	defer t.Stop()
	for st.sendWindow <= 0 || c.sendWindow <= 0 {
		if c.err != nil {
			return c.err
		}
		if st.reset {
			return errH2StreamReset
		}
		if timedOut.Load() {
			st.reset = true
			if st.inMap {
				delete(c.streams, st.id)
				st.inMap = false
			}
			c.resetLocked(st.id, http2.ErrCodeCancel)
			return errH2WindowWait
		}
		c.waiters++
		c.cond.Wait()
		c.waiters--
	}
	return nil
}

// bodyAllowedForStatus reports whether a status may have a body.
func bodyAllowedForStatus(status int) bool {
	switch {
	case status >= 100 && status <= 199:
		return false
	case status == http.StatusNoContent, status == http.StatusNotModified:
		return false
	}
	return true
}

// statusTexts are the :status values, built once.
var statusTexts = func() (s [1000]string) {
	for i := 100; i < len(s); i++ {
		s[i] = strconv.Itoa(i)
	}
	return s
}()

func statusText(code int) string { return statusTexts[code] }

// lowerResponseKey is a response header's name as HTTP/2 sends it:
// lowercase, and ok false when it is not a valid field name (then it is
// not sent, as net/http does).
func lowerResponseKey(k string) (string, bool) {
	if lk, ok := commonLower[k]; ok {
		return lk, true
	}
	for i := 0; i < len(k); i++ {
		if k[i] >= 0x80 {
			return "", false
		}
	}
	lk := strings.ToLower(k)
	return lk, validWireName(lk)
}

// canonicalRequestKey is a request header's key in http.Header.
func canonicalRequestKey(name string) string {
	if k, ok := commonCanonical[name]; ok {
		return k
	}
	return http.CanonicalHeaderKey(name)
}

// commonHeaders are the header names requests and site answers carry
// most; their lowercase and canonical forms are built once.
var commonHeaders = []string{
	"Accept", "Accept-Charset", "Accept-Encoding", "Accept-Language", "Accept-Ranges",
	"Access-Control-Allow-Origin", "Age", "Allow", "Authorization", "Cache-Control",
	"Content-Disposition", "Content-Encoding", "Content-Language", "Content-Length",
	"Content-Location", "Content-Range", "Content-Security-Policy", "Content-Type", "Cookie",
	"Date", "Dnt", "Etag", "Expires", "From", "Host", "If-Match", "If-Modified-Since",
	"If-None-Match", "If-Range", "If-Unmodified-Since", "Last-Modified", "Link", "Location",
	"Origin", "Permissions-Policy", "Pragma", "Priority", "Referer", "Referrer-Policy", "Retry-After",
	"Sec-Ch-Ua", "Sec-Ch-Ua-Mobile", "Sec-Ch-Ua-Platform", "Sec-Fetch-Dest", "Sec-Fetch-Mode",
	"Sec-Fetch-Site", "Sec-Fetch-User", "Server", "Set-Cookie", "Strict-Transport-Security",
	"Upgrade-Insecure-Requests", "User-Agent", "Vary", "Via", "Www-Authenticate",
	"X-Content-Type-Options", "X-Forwarded-For", "X-Forwarded-Proto", "X-Frame-Options",
	"X-Real-Ip", "X-Requested-With", "X-Robots-Tag", "X-Xss-Protection",
}

var commonLower, commonCanonical = func() (lower, canonical map[string]string) {
	lower = make(map[string]string, len(commonHeaders))
	canonical = make(map[string]string, len(commonHeaders))
	for _, k := range commonHeaders {
		lk := strings.ToLower(k)
		lower[k] = lk
		canonical[lk] = k
	}
	return lower, canonical
}()

// httpDate is the Date header's value now, formatted once a second.
func httpDate() string {
	now := time.Now()
	sec := now.Unix()
	if d := dateCache.Load(); d != nil && d.sec == sec {
		return d.s
	}
	d := &cachedDate{sec: sec, s: now.UTC().Format(http.TimeFormat)}
	dateCache.Store(d)
	return d.s
}

type cachedDate struct {
	sec int64
	s   string
}

var dateCache atomic.Pointer[cachedDate]
