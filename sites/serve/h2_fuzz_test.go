package serve

import (
	"bytes"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// FuzzH2Conn feeds H2Server arbitrary bytes after the client preface:
// whatever the frames, it never panics (a panic of the connection is
// logged, which fails the test), and it ends the connection once the
// peer is gone, within a deadline (it never hangs).
func FuzzH2Conn(f *testing.F) {
	sitesSrv := h2Sites(f)
	handler := siteHandler(sitesSrv)
	for _, seed := range h2Seeds() {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		srv := NewH2Server(H2Options{
			Handler: handler, SiteHost: isTestSiteHost, MaxHeaderBytes: 8 << 10,
			IdleTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second,
			Logger: slog.New(slog.NewTextHandler(tWriter{t}, nil)),
		})
		client, server := net.Pipe()
		served := make(chan struct{})
		go func() {
			srv.ServeConn(server)
			close(served)
		}()
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = io.Copy(io.Discard, client) // the server's frames
		}()
		_ = client.SetWriteDeadline(time.Now().Add(5 * time.Second))
		_, _ = io.WriteString(client, http2.ClientPreface)
		_, _ = client.Write(input)
		time.Sleep(time.Millisecond) // let the server answer what it read
		client.Close()
		select {
		case <-served:
		case <-time.After(10 * time.Second):
			t.Fatal("ServeConn did not return after the peer closed")
		}
		wg.Wait()
	})
}

// h2Seeds are frame sequences a client sends: requests, a gate post,
// settings, pings, window updates, resets, priorities and CONTINUATION.
func h2Seeds() [][]byte {
	var seeds [][]byte
	build := func(write func(fr *http2.Framer, block func(fields ...string) []byte)) {
		var buf, hbuf bytes.Buffer
		fr := http2.NewFramer(&buf, nil)
		enc := hpack.NewEncoder(&hbuf)
		block := func(fields ...string) []byte {
			hbuf.Reset()
			for i := 0; i+1 < len(fields); i += 2 {
				_ = enc.WriteField(hpack.HeaderField{Name: fields[i], Value: fields[i+1]})
			}
			return append([]byte(nil), hbuf.Bytes()...)
		}
		_ = fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 100})
		write(fr, block)
		seeds = append(seeds, buf.Bytes())
	}
	get := func(path string) []string {
		return []string{":method", "GET", ":scheme", "https", ":authority", "demo.sites.test", ":path", path, "accept-encoding", "gzip"}
	}
	build(func(fr *http2.Framer, block func(...string) []byte) {
		_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block(get("/")...), EndStream: true, EndHeaders: true})
		_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: block(get("/big.bin")...), EndStream: true, EndHeaders: true})
		_ = fr.WriteWindowUpdate(3, 1000)
		_ = fr.WriteWindowUpdate(0, 1000)
		_ = fr.WriteRSTStream(3, http2.ErrCodeCancel)
		_ = fr.WritePing(false, [8]byte{1})
		_ = fr.WriteSettingsAck()
	})
	build(func(fr *http2.Framer, block func(...string) []byte) {
		b := block(":method", "POST", ":scheme", "https", ":authority", "gated.sites.test", ":path", GatePath,
			"content-type", "application/x-www-form-urlencoded", "content-length", "12")
		_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: b[:3], EndHeaders: false})
		_ = fr.WriteContinuation(1, true, b[3:])
		_ = fr.WriteData(1, false, []byte("password="))
		_ = fr.WriteData(1, true, []byte("abc"))
	})
	build(func(fr *http2.Framer, block func(...string) []byte) {
		_ = fr.WritePriority(1, http2.PriorityParam{StreamDep: 1})
		_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 5, BlockFragment: block(get("/app.3f2a1b9c.js")...), EndStream: true, EndHeaders: true,
			Priority: http2.PriorityParam{StreamDep: 3, Weight: 10}})
		_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 7, BlockFragment: block(get("/img.png")...), EndStream: false, EndHeaders: true})
		_ = fr.WriteData(7, true, []byte("body"))
		_ = fr.WriteGoAway(0, http2.ErrCodeNo, nil)
	})
	return seeds
}
