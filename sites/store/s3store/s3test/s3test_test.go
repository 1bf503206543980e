package s3test

import (
	"bytes"
	"context"
	"io"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// TestStartNeedsNothingInstalled starts a server with no versitygw (and
// no go command) on PATH and an empty home and cache folder: the server
// is part of the test binary, so there is nothing to find or install.
func TestStartNeedsNothingInstalled(t *testing.T) {
	empty := t.TempDir()
	t.Setenv("PATH", empty)
	t.Setenv("HOME", empty)
	t.Setenv("XDG_CACHE_HOME", empty)
	t.Setenv("GOPATH", empty)
	if p, err := exec.LookPath("versitygw"); err == nil {
		t.Fatalf("versitygw is still on PATH: %s", p)
	}
	s := Start(t)
	bucket := s.NewBucket(t)
	put(t, s, bucket, "a.txt", "hello")
	if got := get(t, s, bucket, "a.txt"); got != "hello" {
		t.Fatalf("got %q, want %q", got, "hello")
	}
}

// TestStopRestart checks what the store-down tests rely on: a stopped
// server refuses connections on its port, and Restart brings it back on
// the same port with the same objects.
func TestStopRestart(t *testing.T) {
	s := Start(t)
	bucket := s.NewBucket(t)
	put(t, s, bucket, "kept.txt", "still here")
	s.Stop()
	if c, err := net.DialTimeout("tcp", s.addr, time.Second); err == nil {
		c.Close()
		t.Fatalf("stopped server still accepts connections on %s", s.addr)
	}
	s.Restart(t)
	if got := get(t, s, bucket, "kept.txt"); got != "still here" {
		t.Fatalf("after restart got %q, want %q", got, "still here")
	}
}

// TestServerEndsWithTestProcess checks that a server does not outlive the
// test process that started it (a crashed or timed-out test binary closes
// the server's standard input, as closing alive does here).
func TestServerEndsWithTestProcess(t *testing.T) {
	s := Start(t)
	s.mu.Lock()
	cmd := s.cmd
	s.alive.Close()
	s.mu.Unlock()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("server exited with %v, want a clean exit", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("server still running 30 s after its parent went away")
	}
	s.mu.Lock()
	s.cmd, s.alive = nil, nil // Stop has nothing left to do
	s.mu.Unlock()
}

func put(t *testing.T, s *Server, bucket, key, body string) {
	t.Helper()
	_, err := s.Client(t).PutObject(context.Background(), &s3.PutObjectInput{
		Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader(body),
	})
	if err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
}

func get(t *testing.T, s *Server, bucket, key string) string {
	t.Helper()
	out, err := s.Client(t).GetObject(context.Background(), &s3.GetObjectInput{
		Bucket: aws.String(bucket), Key: aws.String(key),
	})
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	defer out.Body.Close()
	var b bytes.Buffer
	if _, err := io.Copy(&b, out.Body); err != nil {
		t.Fatalf("read %s: %v", key, err)
	}
	return b.String()
}
