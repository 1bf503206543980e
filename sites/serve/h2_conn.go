package serve

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http/httpguts"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// h2Conn is one HTTP/2 connection. Its frames are read by one goroutine
// at a time, "the loop" (loop-owned fields below); mu guards what the
// handlers on goroutines of their own share with it.
type h2Conn struct {
	srv  *H2Server
	nc   net.Conn
	br   *bufio.Reader
	fr   *http2.Framer
	hdec *hpack.Decoder
	// ctx is every request's context, cancelled when the connection
	// closes; tmpl is a request with ctx set, copied into each request.
	ctx    context.Context
	cancel context.CancelFunc
	tmpl   http.Request
	// gather, when the connection is TLS over the main listener's
	// Conn, sends each flush's TLS records in one write.
	gather *Conn
	// remoteAddr and tlsState are every request's.
	remoteAddr string
	tlsState   *tls.ConnectionState
	// done is closed once the connection is closed and no goroutine
	// works for it.
	done chan struct{}

	// Loop-owned.
	scratch      *h2Stream // the stream object answers inline reuse
	block        h2Block   // the header block being read
	recvWindow   int32     // the connection's receive window left
	recvUnacked  int32     // received and not yet given back
	control      h2Bucket
	resets       h2Bucket
	readDeadline time.Time
	settingsDue  time.Time // zero once the peer acknowledged ours
	sawSettings  bool      // the peer's first frame was SETTINGS
	// bodyWaiters counts the gate posts waiting for their body (under
	// mu); the connection closes if one is still waiting at bodyDue,
	// the earliest of their deadlines (see bodyWaitEndedLocked).
	bodyWaiters int
	bodyDue     time.Time
	// blockDue is when a header block split over CONTINUATION frames
	// must have ended (zero: none is open).
	blockDue    time.Time
	maxStreamID atomic.Uint32

	mu   sync.Mutex
	cond sync.Cond
	// wbuf gathers the frames to send (see flushLocked), in the buffer
	// wbufp from h2WriteBuffers.
	wbuf    []byte
	wbufp   *[]byte
	henc    *hpack.Encoder
	hbuf    bytes.Buffer
	streams map[uint32]*h2Stream // streams open past their HEADERS frame
	// recent are the last streams reset by us with the peer's side
	// open: its DATA in flight is dropped quietly.
	recent     [8]uint32
	recentNext int
	// active counts the streams being answered or waiting for their
	// body, reset ones whose handler still runs included.
	active int
	// refs counts the goroutines working for the connection.
	refs          int
	waiters       int
	sendWindow    int64 // the peer's connection window
	peerWindow    int64 // the peer's initial stream window
	peerMaxFrame  int
	err           error // the first write error, or errH2Closed
	goAway        bool
	closed        bool
	writeDeadline time.Time
}

var (
	errH2Closed      = errors.New("http2: connection closed")
	errH2StreamReset = errors.New("http2: stream reset")
	errH2WindowWait  = errors.New("http2: timed out waiting for the peer's flow-control window")
)

// h2ConnError is a connection error: GOAWAY with its code, then close.
type h2ConnError struct {
	code   http2.ErrCode
	reason string
}

func (e h2ConnError) Error() string { return fmt.Sprintf("http2: %v: %s", e.code, e.reason) }

func connErr(code http2.ErrCode, reason string) error { return h2ConnError{code, reason} }

func newH2Conn(s *H2Server, nc net.Conn) *h2Conn {
	c := &h2Conn{
		srv:          s,
		nc:           nc,
		br:           bufio.NewReaderSize(nc, h2ReadBuffer),
		done:         make(chan struct{}),
		recvWindow:   h2InitialWindow,
		streams:      map[uint32]*h2Stream{},
		refs:         1,
		sendWindow:   h2InitialWindow,
		peerWindow:   h2InitialWindow,
		peerMaxFrame: h2MaxFrame,
		control:      h2Bucket{tokens: h2ControlBurst},
		resets:       h2Bucket{tokens: h2ResetBurst},
		remoteAddr:   nc.RemoteAddr().String(),
		tlsState:     connTLS(nc),
	}
	c.cond.L = &c.mu
	if tc, ok := nc.(*tls.Conn); ok {
		c.gather, _ = tc.NetConn().(*Conn)
	}
	c.fr = http2.NewFramer(nil, c.br)
	c.fr.SetMaxReadFrameSize(h2MaxFrame)
	c.fr.SetReuseFrames()
	c.hdec = hpack.NewDecoder(4096, c.emit)
	c.hdec.SetMaxStringLength(int(s.maxHeader))
	c.henc = hpack.NewEncoder(&c.hbuf)
	c.ctx, c.cancel = context.WithCancel(s.ctx)
	c.tmpl = *(&http.Request{}).WithContext(c.ctx)
	return c
}

// serve runs the connection on the calling goroutine: the preface and
// settings, then the loop, until the connection ends or this goroutine
// goes on with a stream of its own (see detachLocked).
func (c *h2Conn) serve() {
	defer func() {
		if r := recover(); r != nil {
			c.logPanic(r)
			c.closeConn()
			c.release()
		}
	}()
	c.settingsDue = time.Now().Add(h2SettingsTimeout)
	_ = c.nc.SetReadDeadline(c.settingsDue)
	c.readDeadline = c.settingsDue
	var preface [len(http2.ClientPreface)]byte
	if _, err := io.ReadFull(c.br, preface[:]); err != nil || string(preface[:]) != http2.ClientPreface {
		c.closeConn() // not HTTP/2: no GOAWAY (RFC 9113, 3.4)
		c.release()
		return
	}
	// SETTINGS once the preface is in (the peer sends it at once),
	// so that a synchronous pipe works too.
	c.mu.Lock()
	c.writeSettingsLocked()
	c.mu.Unlock()
	c.loop(nil)
}

// loop reads and processes frames until the connection ends, or until
// its goroutine goes on with a stream (then another loop has started).
// ready, when not nil, is closed once the loop has processed what input
// was buffered (or stopped being the loop): the stream that started it
// waits for that before it writes on (see detachLocked).
func (c *h2Conn) loop(ready chan struct{}) {
	defer func() {
		if ready != nil {
			close(ready)
		}
	}()
	for {
		if c.br.Buffered() == 0 {
			if ready != nil {
				close(ready)
				ready = nil
			}
			c.mu.Lock()
			err := c.flushLocked()
			active := c.active
			if active == 0 && c.wbufp != nil {
				// an idle connection holds no write buffer
				*c.wbufp = c.wbuf[:0]
				h2WriteBuffers.Put(c.wbufp)
				c.wbuf, c.wbufp = nil, nil
			}
			c.mu.Unlock()
			if err != nil {
				c.closeConn()
				c.release()
				return
			}
			c.armRead(active)
		}
		f, err := c.fr.ReadFrame()
		if err != nil {
			if c.readFailed(err) {
				continue
			}
			c.release()
			return
		}
		detached, err := c.process(f)
		if detached {
			// another loop reads now; this goroutine's stream is done
			c.release()
			return
		}
		if err != nil {
			c.fatal(err)
			c.release()
			return
		}
	}
}

// readFailed handles a failed ReadFrame, and reports whether the loop
// goes on (a stream error: the stream is reset).
func (c *h2Conn) readFailed(err error) bool {
	var se http2.StreamError
	var ce http2.ConnectionError
	switch {
	case errors.As(err, &se):
		if !c.sawSettings {
			c.fatal(connErr(http2.ErrCodeProtocol, "the first frame is not SETTINGS"))
			return false
		}
		if err := c.streamError(se.StreamID, se.Code); err != nil {
			c.fatal(err)
			return false
		}
		return true
	case errors.As(err, &ce):
		c.fatal(connErr(http2.ErrCode(ce), "frame error"))
	case errors.Is(err, http2.ErrFrameTooLarge):
		c.fatal(connErr(http2.ErrCodeFrameSize, "frame too large"))
	case errors.Is(err, os.ErrDeadlineExceeded):
		c.mu.Lock()
		active := c.active
		c.mu.Unlock()
		switch {
		case !c.settingsDue.IsZero() && !time.Now().Before(c.settingsDue):
			c.fatal(connErr(http2.ErrCodeSettingsTimeout, "no SETTINGS acknowledgement"))
		case !c.blockDue.IsZero():
			c.fatal(connErr(http2.ErrCodeCancel, "header block too slow"))
		case c.bodyWaiters > 0:
			c.fatal(connErr(http2.ErrCodeCancel, "request body too slow"))
		case active == 0:
			c.fatal(connErr(http2.ErrCodeNo, "idle"))
		default:
			c.closeConn()
		}
	default:
		c.closeConn() // EOF, reset, closed
	}
	return false
}

// armRead sets the read deadline before the loop waits for input: the
// idle timeout when no stream is active, none while streams are (their
// writes have deadlines), and the settings acknowledgement's. It calls
// SetReadDeadline only when the deadline moves by a second or more.
func (c *h2Conn) armRead(active int) {
	var d time.Time
	now := time.Now()
	if active == 0 {
		d = now.Add(c.srv.o.IdleTimeout)
	}
	if c.bodyWaiters > 0 && (d.IsZero() || c.bodyDue.Before(d)) {
		d = c.bodyDue
	}
	if !c.blockDue.IsZero() && (d.IsZero() || c.blockDue.Before(d)) {
		d = c.blockDue
	}
	if !c.settingsDue.IsZero() && (d.IsZero() || c.settingsDue.Before(d)) {
		d = c.settingsDue
	}
	if d.IsZero() == c.readDeadline.IsZero() && (d.IsZero() || d.Sub(c.readDeadline) < time.Second && !d.Before(c.readDeadline)) {
		return
	}
	c.readDeadline = d
	_ = c.nc.SetReadDeadline(d)
}

// process handles one frame. detached reports that a stream answered
// inline went on on this goroutine, which is no longer the loop.
func (c *h2Conn) process(f http2.Frame) (detached bool, err error) {
	if !c.sawSettings {
		sf, ok := f.(*http2.SettingsFrame)
		if !ok || sf.IsAck() {
			return false, connErr(http2.ErrCodeProtocol, "the first frame is not SETTINGS")
		}
		c.sawSettings = true
	}
	switch f := f.(type) {
	case *http2.HeadersFrame:
		return c.processHeaders(f)
	case *http2.ContinuationFrame:
		return c.processContinuation(f)
	case *http2.DataFrame:
		return false, c.processData(f)
	case *http2.SettingsFrame:
		return false, c.processSettings(f)
	case *http2.WindowUpdateFrame:
		return false, c.processWindowUpdate(f)
	case *http2.RSTStreamFrame:
		return false, c.processReset(f)
	case *http2.PingFrame:
		if f.IsAck() {
			return false, nil
		}
		if !c.control.take(time.Now(), h2ControlRate, h2ControlBurst) {
			return false, connErr(http2.ErrCodeEnhanceYourCalm, "too many PINGs")
		}
		c.mu.Lock()
		c.frameHeaderLocked(8, http2.FramePing, http2.FlagPingAck, 0)
		c.wbuf = append(c.wbuf, f.Data[:]...)
		c.mu.Unlock()
	case *http2.PriorityFrame:
		if f.StreamDep == f.StreamID {
			return false, c.streamError(f.StreamID, http2.ErrCodeProtocol)
		}
	case *http2.GoAwayFrame:
		// the peer opens no more streams; those open finish
	case *http2.PushPromiseFrame:
		return false, connErr(http2.ErrCodeProtocol, "PUSH_PROMISE from a client")
	}
	return false, nil
}

// streamError resets stream id for an error of the peer's, within the
// reset budget.
func (c *h2Conn) streamError(id uint32, code http2.ErrCode) error {
	if !c.resets.take(time.Now(), h2ResetRate, h2ResetBurst) {
		return connErr(http2.ErrCodeEnhanceYourCalm, "too many stream errors")
	}
	c.mu.Lock()
	if st := c.streams[id]; st != nil {
		c.dropLocked(st)
	}
	c.resetLocked(id, code)
	c.mu.Unlock()
	return nil
}

func (c *h2Conn) processSettings(f *http2.SettingsFrame) error {
	if f.IsAck() {
		c.settingsDue = time.Time{}
		return nil
	}
	if !c.control.take(time.Now(), h2ControlRate, h2ControlBurst) {
		return connErr(http2.ErrCodeEnhanceYourCalm, "too many SETTINGS")
	}
	if err := f.ForeachSetting(func(s http2.Setting) error { return s.Valid() }); err != nil {
		var ce http2.ConnectionError
		if errors.As(err, &ce) {
			return connErr(http2.ErrCode(ce), "invalid setting")
		}
		return connErr(http2.ErrCodeProtocol, "invalid setting")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	err := f.ForeachSetting(func(s http2.Setting) error {
		switch s.ID {
		case http2.SettingHeaderTableSize:
			c.henc.SetMaxDynamicTableSize(s.Val)
		case http2.SettingInitialWindowSize:
			delta := int64(s.Val) - c.peerWindow
			for _, st := range c.streams {
				if st.sendWindow+delta > h2MaxWindow {
					return connErr(http2.ErrCodeFlowControl, "window overflow")
				}
				st.sendWindow += delta
			}
			c.peerWindow = int64(s.Val)
		case http2.SettingMaxFrameSize:
			c.peerMaxFrame = int(s.Val)
		}
		return nil
	})
	if err != nil {
		return err
	}
	c.frameHeaderLocked(0, http2.FrameSettings, http2.FlagSettingsAck, 0)
	c.wakeLocked()
	return nil
}

func (c *h2Conn) processWindowUpdate(f *http2.WindowUpdateFrame) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	inc := int64(f.Increment)
	if f.StreamID == 0 {
		if c.sendWindow+inc > h2MaxWindow {
			return connErr(http2.ErrCodeFlowControl, "connection window overflow")
		}
		c.sendWindow += inc
		c.wakeLocked()
		return nil
	}
	if f.StreamID > c.maxStreamID.Load() {
		return connErr(http2.ErrCodeProtocol, "WINDOW_UPDATE on an idle stream")
	}
	st := c.streams[f.StreamID]
	if st == nil {
		return nil // closed
	}
	if st.sendWindow+inc > h2MaxWindow {
		c.dropLocked(st)
		c.resetLocked(st.id, http2.ErrCodeFlowControl)
		return nil
	}
	st.sendWindow += inc
	c.wakeLocked()
	return nil
}

func (c *h2Conn) processReset(f *http2.RSTStreamFrame) error {
	if f.StreamID > c.maxStreamID.Load() {
		return connErr(http2.ErrCodeProtocol, "RST_STREAM on an idle stream")
	}
	if !c.resets.take(time.Now(), h2ResetRate, h2ResetBurst) {
		return connErr(http2.ErrCodeEnhanceYourCalm, "too many resets")
	}
	c.mu.Lock()
	if st := c.streams[f.StreamID]; st != nil {
		c.dropLocked(st)
	}
	c.mu.Unlock()
	return nil
}

// dropLocked ends st's life on the connection: it is reset, out of the
// streams, and no longer counted once no handler runs for it.
func (c *h2Conn) dropLocked(st *h2Stream) {
	st.reset = true
	st.remoteOpen = false
	if st.inMap {
		delete(c.streams, st.id)
		st.inMap = false
	}
	if st.waitBody { // never dispatched: nothing else will end it
		st.waitBody = false
		c.bodyWaitEndedLocked()
		c.activeDoneLocked(true)
	}
	c.wakeLocked()
}

func (c *h2Conn) processData(f *http2.DataFrame) error {
	id := f.StreamID
	n := int32(f.Header().Length)
	c.mu.Lock()
	defer c.mu.Unlock()
	if id > c.maxStreamID.Load() {
		return connErr(http2.ErrCodeProtocol, "DATA on an idle stream")
	}
	if n > c.recvWindow {
		return connErr(http2.ErrCodeFlowControl, "connection window exceeded")
	}
	c.recvWindow -= n
	c.recvUnacked += n
	if c.recvUnacked >= h2InitialWindow/4 {
		c.windowUpdateLocked(0, uint32(c.recvUnacked))
		c.recvWindow += c.recvUnacked
		c.recvUnacked = 0
	}
	st := c.streams[id]
	if st == nil || !st.remoteOpen {
		for _, r := range c.recent {
			if r == id {
				return nil // reset by us: frames in flight are dropped
			}
		}
		c.mu.Unlock()
		err := c.streamError(id, http2.ErrCodeStreamClosed)
		c.mu.Lock()
		return err
	}
	if n > st.recvWindow {
		c.dropLocked(st)
		c.resetLocked(id, http2.ErrCodeFlowControl)
		return nil
	}
	st.recvWindow -= n
	data := f.Data()
	if !st.waitBody {
		// an answered request's body: dropped
		if f.StreamEnded() {
			st.remoteOpen = false
		}
		return nil
	}
	st.bodySeen += int64(len(data))
	if room := h2MaxBody - len(st.body); room > 0 {
		st.body = append(st.body, data[:min(room, len(data))]...)
	}
	if st.declLen >= 0 && (st.bodySeen > st.declLen || f.StreamEnded() && st.bodySeen != st.declLen) {
		// RFC 9113, 8.1.1: a content-length that is not the body's
		c.dropLocked(st)
		c.resetLocked(id, http2.ErrCodeProtocol)
		return nil
	}
	if f.StreamEnded() {
		st.remoteOpen = false
	}
	if f.StreamEnded() || len(st.body) > maxGateForm {
		c.startOwnLocked(st)
	}
	return nil
}

// startOwnLocked answers st, whose body has come (or is too long to
// keep), on a goroutine of its own.
func (c *h2Conn) startOwnLocked(st *h2Stream) {
	st.waitBody = false
	c.bodyWaitEndedLocked()
	st.own = true
	st.req.Body = io.NopCloser(bytes.NewReader(st.body))
	c.refs++
	go func() {
		c.answer(st)
		c.release()
	}()
}

// bodyWaitEndedLocked counts off a stream that no longer waits for its
// body (waitBody cleared), and moves bodyDue to the earliest deadline of
// those still waiting: each has its own, which a later stream's does not
// push back.
func (c *h2Conn) bodyWaitEndedLocked() {
	c.bodyWaiters--
	c.bodyDue = time.Time{}
	if c.bodyWaiters == 0 {
		return
	}
	for _, st := range c.streams {
		if st.waitBody && (c.bodyDue.IsZero() || st.bodyDue.Before(c.bodyDue)) {
			c.bodyDue = st.bodyDue
		}
	}
}

// processHeaders starts a header block: a new stream's request, or a
// request's trailers.
func (c *h2Conn) processHeaders(f *http2.HeadersFrame) (bool, error) {
	id := f.StreamID
	if id%2 == 0 {
		return false, connErr(http2.ErrCodeProtocol, "even stream id from a client")
	}
	b := &c.block
	*b = h2Block{id: id, endStream: f.StreamEnded(), priorityLoop: f.HasPriority() && f.Priority.StreamDep == id}
	max := c.maxStreamID.Load()
	switch {
	case id > max:
		c.maxStreamID.Store(id)
		c.mu.Lock()
		goAway := c.goAway
		c.mu.Unlock()
		if goAway {
			b.ignore = true // after GOAWAY: not answered
		} else {
			if c.scratch == nil {
				c.scratch = newH2Stream(c)
			}
			b.st = c.scratch
			b.st.reuse(id)
		}
	default:
		c.mu.Lock()
		st := c.streams[id]
		c.mu.Unlock()
		if st == nil {
			return false, connErr(http2.ErrCodeProtocol, "HEADERS on a closed stream")
		}
		b.trailers = true
		b.trailerOf = st
	}
	c.hdec.SetEmitEnabled(true)
	if err := c.decodeFragment(f.HeaderBlockFragment()); err != nil {
		return false, err
	}
	if !f.HeadersEnded() {
		c.blockDue = time.Now().Add(c.srv.o.HeaderTimeout)
		return false, nil
	}
	return c.endBlock()
}

func (c *h2Conn) processContinuation(f *http2.ContinuationFrame) (bool, error) {
	b := &c.block
	b.frames++
	if b.frames > h2MaxContinuations(c.srv.maxHeader) {
		return false, connErr(http2.ErrCodeEnhanceYourCalm, "too many CONTINUATION frames")
	}
	if err := c.decodeFragment(f.HeaderBlockFragment()); err != nil {
		return false, err
	}
	if !f.HeadersEnded() {
		return false, nil
	}
	return c.endBlock()
}

// h2MaxContinuations is the most CONTINUATION frames a header block may
// take: a list at the limit, in frames of a quarter of the largest
// size, with room to spare (CVE-2024-27316: a block that never ends).
func h2MaxContinuations(maxHeader uint32) int {
	return 8 + 4*int(maxHeader/h2MaxFrame)
}

// decodeFragment decodes a piece of the header block; the block's
// encoded size is bounded at twice the header list limit.
func (c *h2Conn) decodeFragment(frag []byte) error {
	b := &c.block
	b.fragBytes += len(frag)
	if b.fragBytes > 2*int(c.srv.maxHeader) {
		return connErr(http2.ErrCodeEnhanceYourCalm, "header block too large")
	}
	if _, err := c.hdec.Write(frag); err != nil {
		return connErr(http2.ErrCodeCompression, "bad HPACK")
	}
	return nil
}

// endBlock ends a header block: it answers the request, or refuses it.
func (c *h2Conn) endBlock() (bool, error) {
	b := &c.block
	c.blockDue = time.Time{}
	if err := c.hdec.Close(); err != nil {
		return false, connErr(http2.ErrCodeCompression, "truncated HPACK")
	}
	id := b.id
	if b.trailers {
		st := b.trailerOf
		c.mu.Lock()
		ok := st.inMap && st.remoteOpen
		c.mu.Unlock()
		if !ok {
			return false, c.streamError(id, http2.ErrCodeStreamClosed)
		}
		if !b.endStream || b.bad {
			return false, c.streamError(id, http2.ErrCodeProtocol)
		}
		c.mu.Lock()
		st.remoteOpen = false
		if st.waitBody {
			c.startOwnLocked(st)
		}
		c.mu.Unlock()
		return false, nil
	}
	if b.ignore {
		return false, nil
	}
	st := b.st
	if b.bad || b.priorityLoop {
		return false, c.streamError(id, http2.ErrCodeProtocol)
	}
	c.mu.Lock()
	if c.active >= int(c.srv.o.MaxConcurrentStreams) {
		c.resetLocked(id, http2.ErrCodeRefusedStream)
		c.mu.Unlock()
		return false, nil
	}
	c.active++
	st.sendWindow = c.peerWindow
	c.mu.Unlock()
	handler := c.srv.o.Handler
	if b.truncated {
		handler = http.HandlerFunc(headerListTooLong)
		b.method, b.path, b.scheme = http.MethodGet, "/", "https"
	} else if !b.validRequest() {
		c.mu.Lock()
		c.activeDoneLocked(true)
		c.mu.Unlock()
		return false, c.streamError(id, http2.ErrCodeProtocol)
	}
	if err := st.fillRequest(b); err != nil {
		c.mu.Lock()
		c.activeDoneLocked(true)
		c.mu.Unlock()
		return false, c.streamError(id, http2.ErrCodeProtocol)
	}
	if !b.truncated && !c.srv.o.SiteHost(st.req.Host) {
		handler = c.srv.misdirected
	}
	st.handler = handler
	st.remoteOpen = !b.endStream
	if st.remoteOpen {
		// A body comes: answered once it is in (a gate form's), or
		// once it is longer than any the site server takes, so that
		// a malformed body (its content-length) is a reset, not an
		// answer; the body is not kept past that.
		c.scratch = nil
		st.waitBody = true
		st.bodyDue = time.Now().Add(c.srv.o.BodyTimeout)
		c.mu.Lock()
		if c.bodyWaiters == 0 { // else an earlier stream's comes first
			c.bodyDue = st.bodyDue
		}
		c.bodyWaiters++
		c.streams[id] = st
		st.inMap = true
		c.mu.Unlock()
		return false, nil
	}
	return c.answer(st), nil
}

// headerListTooLong answers a request whose header list is over the
// limit, as net/http's HTTP/2 server does.
func headerListTooLong(w http.ResponseWriter, _ *http.Request) {
	w.WriteHeader(http.StatusRequestHeaderFieldsTooLarge)
	_, _ = io.WriteString(w, "<h1>HTTP Error 431</h1><p>Request Header Field(s) Too Large</p>")
}

// h2Block is the header block being decoded, and the request it makes.
type h2Block struct {
	id           uint32
	endStream    bool
	priorityLoop bool // the HEADERS depend on their own stream
	ignore       bool // decoded for HPACK's state only
	trailers     bool
	trailerOf    *h2Stream
	st           *h2Stream
	frames       int
	fragBytes    int
	size         uint32 // the header list's size so far
	truncated    bool   // over the limit: answered 431
	bad          bool   // malformed: reset
	sawRegular   bool
	pseudo       uint8 // which pseudo-headers were seen
	method       string
	scheme       string
	path         string
	authority    string
	protocol     bool
}

const (
	pseudoMethod = 1 << iota
	pseudoScheme
	pseudoPath
	pseudoAuthority
)

// emit takes one decoded header field of the block.
func (c *h2Conn) emit(hf hpack.HeaderField) {
	b := &c.block
	b.size += hf.Size()
	if b.size > c.srv.maxHeader {
		b.truncated = true
		c.hdec.SetEmitEnabled(false)
		return
	}
	if b.ignore || b.bad {
		return
	}
	name, value := hf.Name, hf.Value
	if !httpguts.ValidHeaderFieldValue(value) {
		b.bad = true
		return
	}
	if strings.HasPrefix(name, ":") {
		if b.sawRegular || b.trailers {
			b.bad = true
			return
		}
		var bit uint8
		switch name {
		case ":method":
			bit, b.method = pseudoMethod, value
		case ":scheme":
			bit, b.scheme = pseudoScheme, value
		case ":path":
			bit, b.path = pseudoPath, value
		case ":authority":
			bit, b.authority = pseudoAuthority, value
		case ":protocol":
			b.protocol = true // extended CONNECT is not offered
		default:
			b.bad = true
		}
		if b.pseudo&bit != 0 {
			b.bad = true
		}
		b.pseudo |= bit
		return
	}
	b.sawRegular = true
	if !validWireName(name) {
		b.bad = true
		return
	}
	switch name {
	case "connection", "proxy-connection", "keep-alive", "transfer-encoding", "upgrade":
		b.bad = true // RFC 9113, 8.2.2
		return
	case "te":
		if value != "trailers" {
			b.bad = true
			return
		}
	}
	if b.trailers {
		return
	}
	b.st.addHeader(name, value)
}

// validWireName reports whether name is a valid lowercase field name.
func validWireName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		ch := name[i]
		if 'A' <= ch && ch <= 'Z' || !httpguts.IsTokenRune(rune(ch)) {
			return false
		}
	}
	return true
}

// validRequest checks the pseudo-headers (RFC 9113, 8.3.1), as
// net/http's HTTP/2 server does.
func (b *h2Block) validRequest() bool {
	if b.protocol {
		return false
	}
	if b.method == http.MethodConnect {
		return b.path == "" && b.scheme == "" && b.authority != ""
	}
	return b.method != "" && b.path != "" && (b.scheme == "https" || b.scheme == "http")
}

// answer runs st's handler and ends the stream. It reports whether st
// went on on the calling goroutine while it answered inline (so the
// caller is no longer the loop).
func (c *h2Conn) answer(st *h2Stream) (detached bool) {
	wasOwn := st.own
	c.runHandler(st)
	st.finish()
	return st.own && !wasOwn
}

// runHandler calls st's handler, and resets the stream when it panics
// (its handler's own recovery aside), as net/http does.
func (c *h2Conn) runHandler(st *h2Stream) {
	defer func() {
		if r := recover(); r != nil {
			if r != http.ErrAbortHandler {
				c.logPanic(r)
			}
			c.mu.Lock()
			st.aborted = true
			if st.inMap {
				delete(c.streams, st.id)
				st.inMap = false
			}
			if !st.reset {
				st.reset = true
				c.resetLocked(st.id, http2.ErrCodeInternal)
			}
			c.mu.Unlock()
		}
	}()
	st.handler.ServeHTTP(st, &st.req)
}

func (c *h2Conn) logPanic(r any) {
	if l := c.srv.o.Logger; l != nil {
		l.Error("http2 site connection panic", "remote", c.remoteAddr, "panic", r)
	}
}

// activeDoneLocked ends the count of a stream; the last one of a
// connection that sent GOAWAY closes it. Otherwise, off the loop
// (which arms its own deadline), the idle timeout starts.
func (c *h2Conn) activeDoneLocked(onLoop bool) {
	c.active--
	if c.active > 0 {
		return
	}
	if c.goAway && !c.closed {
		_ = c.flushLocked()
		c.closed = true
		c.setErrLocked(errH2Closed)
		c.cancel()
		_ = c.nc.Close()
		return
	}
	if !onLoop {
		_ = c.nc.SetReadDeadline(time.Now().Add(c.srv.o.IdleTimeout))
	}
}

// shutdown sends GOAWAY: the streams open finish, and the connection
// closes once none is left.
func (c *h2Conn) shutdown() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.goAway {
		return
	}
	c.goAwayLocked(http2.ErrCodeNo)
	_ = c.flushLocked()
	if c.active == 0 {
		c.closed = true
		c.setErrLocked(errH2Closed)
		c.cancel()
		_ = c.nc.Close()
	}
}

// fatal ends the connection for err (a connection error: GOAWAY with
// its code), lingering a second for the peer to read the GOAWAY.
func (c *h2Conn) fatal(err error) {
	code := http2.ErrCodeProtocol
	var ce h2ConnError
	if errors.As(err, &ce) {
		code = ce.code
	}
	c.mu.Lock()
	if !c.closed {
		if !c.goAway || code != http2.ErrCodeNo {
			c.goAwayLocked(code)
		}
		_ = c.flushLocked()
	}
	closed := c.closed
	c.mu.Unlock()
	if !closed {
		if cw, ok := c.nc.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		_ = c.nc.SetReadDeadline(time.Now().Add(h2LingerTimeout))
		_, _ = io.Copy(io.Discard, io.LimitReader(c.br, 1<<20))
	}
	c.closeConn()
}

// closeConn closes the connection at once: writes fail, waiting
// streams wake.
func (c *h2Conn) closeConn() {
	c.mu.Lock()
	c.closed = true
	c.setErrLocked(errH2Closed)
	c.wakeLocked()
	c.mu.Unlock()
	c.cancel()
	c.hardClose()
}

// hardClose closes the socket under the connection at once: TLS's
// Close would first wait for a write in progress (up to the write
// timeout) to send its close_notify, which HTTP/2 does not need.
func (c *h2Conn) hardClose() {
	if tc, ok := c.nc.(*tls.Conn); ok {
		_ = tc.NetConn().Close()
		return
	}
	_ = c.nc.Close()
}

// release ends the part of a goroutine in the connection; the last one
// closes it and lets ServeConn return.
func (c *h2Conn) release() {
	c.mu.Lock()
	c.refs--
	last := c.refs == 0
	c.mu.Unlock()
	if last {
		c.closeConn()
		close(c.done)
	}
}

// detachLocked has st, answered inline, go on on the calling goroutine,
// and starts a new loop to read the connection meanwhile. The new loop
// answers with a fresh stream object. st writes on once the new loop
// has answered the requests already read (see yieldLocked): so the
// answers asked with a large file go before the rest of it, whatever
// the scheduler does.
func (c *h2Conn) detachLocked(st *h2Stream) {
	st.own = true
	if !st.inMap && !st.reset {
		c.streams[st.id] = st
		st.inMap = true
	}
	if c.scratch == st {
		c.scratch = nil
	}
	c.refs++
	ready := make(chan struct{})
	st.loopReady = ready
	go func() {
		defer func() {
			if r := recover(); r != nil {
				c.logPanic(r)
				c.closeConn()
				c.release()
			}
		}()
		c.loop(ready)
	}()
}

// wakeLocked wakes the streams waiting for a window.
func (c *h2Conn) wakeLocked() {
	if c.waiters > 0 {
		c.cond.Broadcast()
	}
}

func (c *h2Conn) setErrLocked(err error) {
	if c.err == nil {
		c.err = err
	}
}

// Frame writing: everything below appends to wbuf, under mu.

// frameHeaderLocked appends a frame header.
func (c *h2Conn) frameHeaderLocked(length int, t http2.FrameType, flags http2.Flags, id uint32) {
	if c.wbuf == nil {
		if c.wbufp == nil {
			c.wbufp = h2WriteBuffers.Get().(*[]byte)
		}
		c.wbuf = (*c.wbufp)[:0]
	}
	c.wbuf = append(c.wbuf, byte(length>>16), byte(length>>8), byte(length), byte(t), byte(flags))
	c.wbuf = binary.BigEndian.AppendUint32(c.wbuf, id&(1<<31-1))
}

// writeSettingsLocked appends our SETTINGS.
func (c *h2Conn) writeSettingsLocked() {
	settings := [...]http2.Setting{
		{ID: http2.SettingMaxConcurrentStreams, Val: c.srv.o.MaxConcurrentStreams},
		{ID: http2.SettingMaxHeaderListSize, Val: c.srv.maxHeader},
	}
	c.frameHeaderLocked(6*len(settings), http2.FrameSettings, 0, 0)
	for _, s := range settings {
		c.wbuf = binary.BigEndian.AppendUint16(c.wbuf, uint16(s.ID))
		c.wbuf = binary.BigEndian.AppendUint32(c.wbuf, s.Val)
	}
}

// resetLocked sends RST_STREAM for id.
func (c *h2Conn) resetLocked(id uint32, code http2.ErrCode) {
	c.frameHeaderLocked(4, http2.FrameRSTStream, 0, id)
	c.wbuf = binary.BigEndian.AppendUint32(c.wbuf, uint32(code))
}

// windowUpdateLocked gives the peer n more bytes of window on id.
func (c *h2Conn) windowUpdateLocked(id, n uint32) {
	c.frameHeaderLocked(4, http2.FrameWindowUpdate, 0, id)
	c.wbuf = binary.BigEndian.AppendUint32(c.wbuf, n)
}

// goAwayLocked sends GOAWAY with the last stream seen.
func (c *h2Conn) goAwayLocked(code http2.ErrCode) {
	c.goAway = true
	c.frameHeaderLocked(8, http2.FrameGoAway, 0, 0)
	c.wbuf = binary.BigEndian.AppendUint32(c.wbuf, c.maxStreamID.Load())
	c.wbuf = binary.BigEndian.AppendUint32(c.wbuf, uint32(code))
}

// flushLocked writes what is gathered, within the write timeout. A
// failed write closes the connection (every later write fails).
func (c *h2Conn) flushLocked() error {
	if c.err != nil {
		return c.err
	}
	if len(c.wbuf) == 0 {
		return nil
	}
	now := time.Now()
	if c.writeDeadline.Sub(now) < c.srv.o.WriteTimeout/2 {
		c.writeDeadline = now.Add(c.srv.o.WriteTimeout)
		_ = c.nc.SetWriteDeadline(c.writeDeadline)
	}
	var err error
	if c.gather != nil {
		err = c.gather.gatherWrites(c.writeBuffered)
	} else {
		err = c.writeBuffered()
	}
	if cap(c.wbuf) > h2WriteBuffer+h2MaxFrame+64 {
		c.wbuf, c.wbufp = nil, nil // a large header block's buffer is not kept
	} else {
		c.wbuf = c.wbuf[:0]
	}
	if err != nil {
		c.setErrLocked(fmt.Errorf("http2: write: %w", err))
		c.closed = true
		c.wakeLocked()
		c.cancel()
		c.hardClose()
	}
	return c.err
}

// full reports whether n more bytes would not fit in wbuf: it holds
// h2WriteBuffer and a frame, so that two full DATA frames and their
// headers leave together.
func (c *h2Conn) full(n int) bool {
	return len(c.wbuf) > 0 && len(c.wbuf)+n > h2WriteBuffer+h2MaxFrame+64
}

// writeBuffered writes wbuf to the connection.
func (c *h2Conn) writeBuffered() error {
	_, err := c.nc.Write(c.wbuf)
	return err
}

// h2WriteBuffers are the connections' write buffers, held while they
// have streams.
var h2WriteBuffers = sync.Pool{New: func() any { b := make([]byte, 0, h2WriteBuffer+h2MaxFrame+64); return &b }}

// h2Bucket is a token bucket.
type h2Bucket struct {
	tokens float64
	last   time.Time
}

// take takes a token, refilled at rate per second up to burst.
func (b *h2Bucket) take(now time.Time, rate, burst float64) bool {
	if !b.last.IsZero() {
		b.tokens = min(burst, b.tokens+now.Sub(b.last).Seconds()*rate)
	}
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}
