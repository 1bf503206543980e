package serve

import (
	"io"
	"net"
	"testing"
)

func TestReplayConnReadsBufferedFirst(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	buf := []byte("GET / HTTP/1.1\r\n")
	rc := NewReplayConn(a, buf)
	buf[0] = 'X' // the replay keeps its own copy
	go func() {
		b.Write([]byte("Host: x\r\n\r\n"))
		b.Close()
	}()
	got, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	if want := "GET / HTTP/1.1\r\nHost: x\r\n\r\n"; string(got) != want {
		t.Fatalf("read %q, want %q", got, want)
	}
	if c := NewReplayConn(a, nil); c != a {
		t.Fatal("nothing buffered: want the connection itself")
	}
	if rc.(*ReplayConn).TLS() != nil {
		t.Fatal("a plain connection has no TLS state")
	}
}
