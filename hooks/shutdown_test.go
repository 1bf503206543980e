package hooks

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pocketbase/pocketbase/core"
)

// TestGracefulShutdown terminates a serving app while an upload is half
// sent and the dashboard's realtime stream is open: the upload finishes
// (long after PocketBase's own one-second shutdown), the stream ends, and
// serve returns.
func TestGracefulShutdown(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	addr := loopback(freePort(t))
	srv := startServe(t, copyData(t, templates.fixtures(t)), nil, addr, "--http", addr, "--shutdown-timeout", "5m")

	// The dashboard's realtime stream: it would hold a plain drain until
	// the timeout.
	sse, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer sse.Close()
	fmt.Fprintf(sse, "GET /api/realtime HTTP/1.1\r\nHost: web.test\r\n\r\n")
	sseRes, err := http.ReadResponse(bufio.NewReader(sse), nil)
	if err != nil || sseRes.StatusCode != http.StatusOK {
		t.Fatalf("realtime stream: %v %v", sseRes, err)
	}

	// An upload whose body is half sent.
	body := `{"html":"<h1>sent during shutdown</h1>"}`
	up, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	fmt.Fprintf(up, "POST /deploy HTTP/1.1\r\nHost: web.test\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", keyPia, len(body), body[:10])
	time.Sleep(200 * time.Millisecond) // the handler is reading the body

	stopped := make(chan struct{})
	go func() { srv.stop(t); close(stopped) }()
	for deadline := time.Now().Add(10 * time.Second); ; { // the listener closes
		c, err := net.Dial("tcp", addr)
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("still accepting connections after terminate")
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(1500 * time.Millisecond) // past PocketBase's one-second budget

	if _, err := up.Write([]byte(body[10:])); err != nil {
		t.Fatalf("rest of the upload: %v", err)
	}
	res, err := http.ReadResponse(bufio.NewReader(up), nil)
	if err != nil {
		t.Fatalf("upload cut by the shutdown: %v", err)
	}
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(res.Body)
		t.Errorf("upload during shutdown = %d, want 200: %s", res.StatusCode, b)
	}
	select {
	case <-stopped:
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop: the realtime stream holds the drain")
	}
	if strings.Contains(res.Header.Get("Connection"), "keep-alive") {
		t.Error("the drained connection is kept alive")
	}
}

// TestServeWaitsForTermination: the serve command returns only when the
// whole terminate chain has run. A restart (backup restore) re-executes
// the binary at the end of that chain; had serve returned when the drain
// closed the listeners, PocketBase would exit first.
func TestServeWaitsForTermination(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	addr := loopback(freePort(t))
	srv := startServe(t, copyData(t, templates.fixtures(t)), nil, addr, "--http", addr)
	release := make(chan struct{})
	var releaseOnce sync.Once
	// also when the test fails, so the cleanup's stop ends
	defer releaseOnce.Do(func() { close(release) })
	srv.app.OnTerminate().BindFunc(func(e *core.TerminateEvent) error {
		<-release // a slow step late in the chain, as the restart's execve is
		return e.Next()
	})
	go srv.stop(t)
	for deadline := time.Now().Add(10 * time.Second); ; { // the drain has run
		c, err := net.Dial("tcp", addr)
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("still accepting connections after terminate")
		}
		time.Sleep(20 * time.Millisecond)
	}
	select {
	case err := <-srv.done:
		t.Fatalf("serve returned (%v) before termination finished", err)
	case <-time.After(300 * time.Millisecond):
	}
	releaseOnce.Do(func() { close(release) })
	srv.stop(t)
	// A second terminate (after a failed restart, PocketBase terminates
	// again) must not panic.
	if err := srv.app.OnTerminate().Trigger(&core.TerminateEvent{App: srv.app}); err != nil {
		t.Fatal(err)
	}
}
