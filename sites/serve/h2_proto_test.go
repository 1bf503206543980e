package serve

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// rawH2 is a client that writes and reads frames itself.
type rawH2 struct {
	t    testing.TB
	conn net.Conn
	fr   *http2.Framer
	hbuf bytes.Buffer
	enc  *hpack.Encoder
}

// dialRaw connects to addr, sends the preface and SETTINGS with
// settings, and reads the server's SETTINGS.
func dialRaw(t testing.TB, addr string, settings ...http2.Setting) *rawH2 {
	t.Helper()
	conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2"}, ServerName: "demo.sites.test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	r := &rawH2{t: t, conn: conn, fr: http2.NewFramer(conn, conn)}
	r.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	r.enc = hpack.NewEncoder(&r.hbuf)
	if _, err := io.WriteString(conn, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	if err := r.fr.WriteSettings(settings...); err != nil {
		t.Fatal(err)
	}
	f := r.next()
	if sf, ok := f.(*http2.SettingsFrame); !ok || sf.IsAck() {
		t.Fatalf("first frame %v, want SETTINGS", f)
	}
	if err := r.fr.WriteSettingsAck(); err != nil {
		t.Fatal(err)
	}
	return r
}

// block encodes a GET of path on host, and extra fields.
func (r *rawH2) block(host, path string, extra ...string) []byte {
	return r.blockMethod("GET", host, path, extra...)
}

// blockMethod encodes a request of method for path on host, and extra
// fields.
func (r *rawH2) blockMethod(method, host, path string, extra ...string) []byte {
	r.hbuf.Reset()
	fields := append([]string{":method", method, ":scheme", "https", ":authority", host, ":path", path}, extra...)
	for i := 0; i+1 < len(fields); i += 2 {
		_ = r.enc.WriteField(hpack.HeaderField{Name: fields[i], Value: fields[i+1]})
	}
	return append([]byte(nil), r.hbuf.Bytes()...)
}

// get opens stream id with a GET of path on demo.sites.test.
func (r *rawH2) get(id uint32, path string) {
	r.t.Helper()
	if err := r.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: r.block("demo.sites.test", path), EndStream: true, EndHeaders: true}); err != nil {
		r.t.Fatal(err)
	}
}

// next reads a frame within 10 s (nil once the connection is closed).
func (r *rawH2) next() http2.Frame {
	r.t.Helper()
	_ = r.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	f, err := r.fr.ReadFrame()
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || strings.Contains(err.Error(), "reset") {
			return nil
		}
		r.t.Fatalf("read: %v", err)
	}
	return f
}

// goAway reads until a GOAWAY and returns its code; it fails if the
// connection closes first.
func (r *rawH2) goAway() http2.ErrCode {
	r.t.Helper()
	for {
		f := r.next()
		if f == nil {
			r.t.Fatal("connection closed without GOAWAY")
		}
		if ga, ok := f.(*http2.GoAwayFrame); ok {
			return ga.ErrCode
		}
	}
}

// TestH2FlowControl: with the peer's stream window at 1000 bytes, a
// response waits for WINDOW_UPDATE, sending no more than the window,
// while another stream of the connection is answered in full; then
// the window opens and the first finishes, whole.
func TestH2FlowControl(t *testing.T) {
	sitesSrv := h2Sites(t)
	ts := newH2TestServer(t, H2Options{Handler: siteHandler(sitesSrv)})
	want := doH2(t, h2Client(ts.addr), "GET", "https://demo.sites.test/app.3f2a1b9c.js", nil, "")
	r := dialRaw(t, ts.addr, http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1000})
	r.get(1, "/app.3f2a1b9c.js")
	var got1, got3 []byte
	ended1, ended3 := false, false
	for !ended3 {
		switch f := r.next().(type) {
		case *http2.DataFrame:
			switch f.StreamID {
			case 1:
				got1 = append(got1, f.Data()...)
				if len(got1) > 1000 {
					t.Fatalf("stream 1 sent %d bytes in a window of 1000", len(got1))
				}
				if len(got1) == 1000 {
					r.get(3, "/about") // stream 1 waits: 3 must be answered
				}
			case 3:
				got3 = append(got3, f.Data()...)
				ended3 = f.StreamEnded()
			}
		case nil:
			t.Fatal("connection closed")
		}
	}
	if string(got3) != "<h1>about</h1>" {
		t.Errorf("stream 3: %q", got3)
	}
	// open the window: stream 1 goes on to its end
	if err := r.fr.WriteWindowUpdate(1, uint32(len(want.body))); err != nil {
		t.Fatal(err)
	}
	if err := r.fr.WriteWindowUpdate(0, uint32(len(want.body))); err != nil {
		t.Fatal(err)
	}
	for !ended1 {
		switch f := r.next().(type) {
		case *http2.DataFrame:
			if f.StreamID == 1 {
				got1 = append(got1, f.Data()...)
				ended1 = f.StreamEnded()
			}
		case nil:
			t.Fatal("connection closed")
		}
	}
	if !bytes.Equal(got1, want.body) {
		t.Errorf("stream 1: %d bytes, want %d", len(got1), len(want.body))
	}
}

// TestH2RapidReset: streams opened and reset at once, past the budget,
// end the connection with ENHANCE_YOUR_CALM (CVE-2023-44487); the
// handler ran at most once per stream opened before it.
func TestH2RapidReset(t *testing.T) {
	var calls atomic.Int64
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		_, _ = io.WriteString(w, "x")
	})
	ts := newH2TestServer(t, H2Options{Handler: handler})
	r := dialRaw(t, ts.addr)
	done := make(chan error, 1)
	go func() {
		var err error
		for id := uint32(1); id < 2*(h2ResetBurst+200) && err == nil; id += 2 {
			err = r.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: r.block("demo.sites.test", "/"), EndStream: true, EndHeaders: true})
			if err == nil {
				err = r.fr.WriteRSTStream(id, http2.ErrCodeCancel)
			}
		}
		done <- err
	}()
	if code := r.goAway(); code != http2.ErrCodeEnhanceYourCalm {
		t.Errorf("GOAWAY %v, want ENHANCE_YOUR_CALM", code)
	}
	<-done
	if n := calls.Load(); n > h2ResetBurst+100 {
		t.Errorf("%d handler calls for a reset budget of %d", n, h2ResetBurst)
	}
}

// TestH2ContinuationFlood: a header block that never ends (CONTINUATION
// after CONTINUATION) ends the connection once past the bound, before
// its size grows past the header list limit (CVE-2024-27316).
func TestH2ContinuationFlood(t *testing.T) {
	for _, size := range []int{0, 1000} {
		ts := newH2TestServer(t, H2Options{Handler: http.NotFoundHandler(), MaxHeaderBytes: 16 << 10})
		r := dialRaw(t, ts.addr)
		if err := r.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: r.block("demo.sites.test", "/")}); err != nil {
			t.Fatal(err)
		}
		frag := bytes.Repeat([]byte{0x82}, size) // ":method: GET", indexed, again and again
		go func() {
			for i := 0; i < 100_000; i++ {
				if r.fr.WriteContinuation(1, false, frag) != nil {
					return
				}
			}
		}()
		if code := r.goAway(); code != http2.ErrCodeEnhanceYourCalm && code != http2.ErrCodeCompression {
			t.Errorf("fragments of %d bytes: GOAWAY %v, want ENHANCE_YOUR_CALM", size, code)
		}
	}
}

// TestH2PingFlood: PINGs past the budget end the connection.
func TestH2PingFlood(t *testing.T) {
	ts := newH2TestServer(t, H2Options{Handler: http.NotFoundHandler()})
	r := dialRaw(t, ts.addr)
	go func() {
		for i := 0; i < 10*h2ControlBurst; i++ {
			if r.fr.WritePing(false, [8]byte{byte(i)}) != nil {
				return
			}
		}
	}()
	acks := 0
	for {
		f := r.next()
		if f == nil {
			t.Fatal("closed without GOAWAY")
		}
		if p, ok := f.(*http2.PingFrame); ok && p.IsAck() {
			acks++
		}
		if ga, ok := f.(*http2.GoAwayFrame); ok {
			if ga.ErrCode != http2.ErrCodeEnhanceYourCalm || acks > h2ControlBurst+50 {
				t.Errorf("GOAWAY %v after %d PING acks", ga.ErrCode, acks)
			}
			return
		}
	}
}

// TestH2IdleTimeout: a connection without streams closes after the
// idle timeout, with GOAWAY NO_ERROR.
func TestH2IdleTimeout(t *testing.T) {
	ts := newH2TestServer(t, H2Options{Handler: http.NotFoundHandler(), IdleTimeout: 300 * time.Millisecond})
	r := dialRaw(t, ts.addr)
	r.get(1, "/")
	start := time.Now()
	if code := r.goAway(); code != http2.ErrCodeNo {
		t.Errorf("GOAWAY %v, want NO_ERROR", code)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("closed after %v", d)
	}
}

// TestH2HeaderListTooLong: a header list over the limit answers 431,
// as net/http's HTTP/2 server does (a single field longer than the
// limit is a COMPRESSION_ERROR, there as here).
func TestH2HeaderListTooLong(t *testing.T) {
	ts := newH2TestServer(t, H2Options{Handler: http.NotFoundHandler(), MaxHeaderBytes: 4 << 10})
	r := dialRaw(t, ts.addr) // Go's client would refuse to send it
	var extra []string
	for i := range 8 {
		extra = append(extra, fmt.Sprintf("x-big-%d", i), strings.Repeat("a", 1000))
	}
	if err := r.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: r.block("demo.sites.test", "/", extra...), EndStream: true, EndHeaders: true}); err != nil {
		t.Fatal(err)
	}
	for {
		switch f := r.next().(type) {
		case *http2.MetaHeadersFrame:
			if got := f.PseudoValue("status"); got != "431" {
				t.Errorf("status %s, want 431", got)
			}
			return
		case nil:
			t.Fatal("connection closed")
		}
	}
}

// TestH2Shutdown: Shutdown sends GOAWAY, lets the stream in flight
// finish, then closes the connection and returns.
func TestH2Shutdown(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{})
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-release
		_, _ = io.WriteString(w, "finished")
	})
	ts := newH2TestServer(t, H2Options{Handler: handler})
	got := make(chan h2Answer, 1)
	go func() { got <- doH2(t, h2Client(ts.addr), "GET", "https://demo.sites.test/", nil, "") }()
	<-started
	shut := make(chan error, 1)
	go func() { shut <- ts.srv.Shutdown(context.Background()) }()
	time.Sleep(100 * time.Millisecond)
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned %v with a stream in flight", err)
	default:
	}
	close(release)
	if a := <-got; a.status != 200 || string(a.body) != "finished" {
		t.Errorf("the stream in flight: %d %q", a.status, a.body)
	}
	select {
	case err := <-shut:
		if err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Shutdown did not return")
	}
}

// TestH2PeerStopsReading: a peer that reads nothing loses its
// connection after the write timeout; ServeConn returns.
func TestH2PeerStopsReading(t *testing.T) {
	sitesSrv := h2Sites(t)
	ts := newH2TestServer(t, H2Options{Handler: siteHandler(sitesSrv), WriteTimeout: 300 * time.Millisecond})
	r := dialRaw(t, ts.addr, http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1 << 30})
	if err := r.fr.WriteWindowUpdate(0, 1<<30); err != nil {
		t.Fatal(err)
	}
	for id := uint32(1); id < 40; id += 2 {
		r.get(id, "/big.bin")
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		ts.srv.mu.Lock()
		n := len(ts.srv.conns)
		ts.srv.mu.Unlock()
		if n == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("the connection of a peer that reads nothing is still served")
}

// TestH2ResetWaitingStream: a stream waiting for window that the peer
// resets ends (its handler returns), and the connection goes on; a
// body whose length is not its content-length is a reset, never an
// answer (RFC 9113, 8.1.1).
func TestH2ResetWaitingStream(t *testing.T) {
	sitesSrv := h2Sites(t)
	ts := newH2TestServer(t, H2Options{Handler: siteHandler(sitesSrv)})
	r := dialRaw(t, ts.addr, http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1000})
	r.get(1, "/app.3f2a1b9c.js")
	for got := 0; got < 1000; {
		if d, ok := r.next().(*http2.DataFrame); ok && d.StreamID == 1 {
			got += len(d.Data())
		}
	}
	if err := r.fr.WriteRSTStream(1, http2.ErrCodeCancel); err != nil {
		t.Fatal(err)
	}
	// a POST whose body is longer than its content-length
	b := r.blockMethod("POST", "demo.sites.test", "/", "content-length", "2")
	if err := r.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: b, EndHeaders: true}); err != nil {
		t.Fatal(err)
	}
	if err := r.fr.WriteData(3, true, []byte("abc")); err != nil {
		t.Fatal(err)
	}
	r.get(5, "/about")
	var reset3, got5 bool
	for !got5 {
		switch f := r.next().(type) {
		case *http2.RSTStreamFrame:
			if f.StreamID == 3 && f.ErrCode == http2.ErrCodeProtocol {
				reset3 = true
			}
		case *http2.MetaHeadersFrame:
			if f.StreamID == 3 {
				t.Fatalf("stream 3 answered %s", f.PseudoValue("status"))
			}
		case *http2.DataFrame:
			got5 = got5 || f.StreamID == 5 && f.StreamEnded()
		case nil:
			t.Fatal("connection closed")
		}
	}
	if !reset3 {
		t.Error("stream 3 (content-length 2, body of 3) not reset with PROTOCOL_ERROR")
	}
	c := func() *h2Conn {
		ts.srv.mu.Lock()
		defer ts.srv.mu.Unlock()
		for c := range ts.srv.conns {
			return c
		}
		return nil
	}()
	deadline := time.Now().Add(5 * time.Second)
	for {
		c.mu.Lock()
		active, refs := c.active, c.refs
		c.mu.Unlock()
		if active == 0 && refs == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d streams active, %d goroutines, after the reset", active, refs)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestH2LargeFileYields: a large file (sent from disk) has its turn,
// then goes on beside the connection's other streams: a small answer
// asked with it ends first. (Asked later, the loop reading the
// connection may wait for Go's scheduler to poll the network while the
// large file's goroutine runs, which on loopback is as long as the
// whole file.)
func TestH2LargeFileYields(t *testing.T) {
	sitesSrv := h2Sites(t)
	ts := newH2TestServer(t, H2Options{Handler: siteHandler(sitesSrv)})
	r := dialRaw(t, ts.addr, http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1<<31 - 1})
	if err := r.fr.WriteWindowUpdate(0, 1<<31-1-65535); err != nil {
		t.Fatal(err)
	}
	// both requests in one write: the second is read with the first
	var both bytes.Buffer
	fr := http2.NewFramer(&both, nil)
	for _, req := range []struct {
		id   uint32
		path string
	}{{1, "/big.bin"}, {3, "/about"}} {
		if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: req.id, BlockFragment: r.block("demo.sites.test", req.path), EndStream: true, EndHeaders: true}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.conn.Write(both.Bytes()); err != nil {
		t.Fatal(err)
	}
	var big int
	for {
		switch f := r.next().(type) {
		case *http2.DataFrame:
			if f.StreamID == 1 {
				big += len(f.Data())
				if f.StreamEnded() {
					t.Fatalf("the large file (%d bytes) ended before the small answer", big)
				}
			}
			if f.StreamID == 3 && f.StreamEnded() {
				if big > 2*h2TurnBytes {
					t.Errorf("the small answer waited for %d bytes of the large file", big)
				}
				return
			}
		case nil:
			t.Fatal("connection closed")
		}
	}
}

// TestH2HeaderBlockTimeout: a header block that does not end within the
// header timeout (CONTINUATION frames trickling in) ends the connection.
func TestH2HeaderBlockTimeout(t *testing.T) {
	ts := newH2TestServer(t, H2Options{Handler: http.NotFoundHandler(), HeaderTimeout: 300 * time.Millisecond})
	r := dialRaw(t, ts.addr)
	if err := r.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: r.block("demo.sites.test", "/")}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if code := r.goAway(); code != http2.ErrCodeCancel {
		t.Errorf("GOAWAY %v, want CANCEL", code)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("closed after %v", d)
	}
}

// TestH2BodyTimeoutPerStream: each request waiting for its body has its
// own deadline from its HEADERS: a second one opened later does not push
// the first one's back (a peer opening one every little while held the
// first, and the connection, for as long as it went on).
func TestH2BodyTimeoutPerStream(t *testing.T) {
	ts := newH2TestServer(t, H2Options{Handler: http.NotFoundHandler(), BodyTimeout: 1500 * time.Millisecond})
	r := dialRaw(t, ts.addr)
	post := func(id uint32) {
		t.Helper()
		if err := r.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, EndHeaders: true,
			BlockFragment: r.blockMethod("POST", "demo.sites.test", GatePath, "content-type", "application/x-www-form-urlencoded")}); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	post(1)
	time.Sleep(1200 * time.Millisecond)
	post(3)
	if code := r.goAway(); code != http2.ErrCodeCancel {
		t.Errorf("GOAWAY %v, want CANCEL", code)
	}
	// the first stream's deadline is 1.5 s; the second's would be 2.7 s
	if d := time.Since(start); d > 2100*time.Millisecond {
		t.Errorf("closed after %v: the second stream's deadline replaced the first's", d)
	}
}
