// Package s3test runs a real S3 server for tests: versitygw (posix
// backend, in a temporary folder) on a free loopback port. It finds the
// binary on PATH or in $(go env GOPATH)/bin, or installs it once into the
// user cache folder; without it, tests skip, except with CI=true, where
// they fail (.ci/run installs it).
package s3test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Module is the versitygw release the tests run.
const Module = "github.com/versity/versitygw/cmd/versitygw@v1.8.0"

// Test credentials of the server's root user.
const (
	AccessKey = "sitedroptest"
	SecretKey = "sitedroptestsecret"
	Region    = "us-east-1"
)

// Server is a running versitygw.
type Server struct {
	// Endpoint is its base URL, http://127.0.0.1:<port>.
	Endpoint string
	addr     string
	dir      string
	bin      string
	mu       sync.Mutex
	cmd      *exec.Cmd
}

var (
	findOnce sync.Once
	found    string
	findErr  error
	buckets  atomic.Int64
)

// binary finds or installs versitygw.
func binary() (string, error) {
	findOnce.Do(func() {
		if p, err := exec.LookPath("versitygw"); err == nil {
			found = p
			return
		}
		if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
			for _, dir := range filepath.SplitList(strings.TrimSpace(string(out))) {
				p := filepath.Join(dir, "bin", "versitygw")
				if _, err := os.Stat(p); err == nil {
					found = p
					return
				}
			}
		}
		cache, err := os.UserCacheDir()
		if err != nil {
			findErr = err
			return
		}
		bin := filepath.Join(cache, "sitedrop-test", "bin")
		p := filepath.Join(bin, "versitygw")
		if _, err := os.Stat(p); err == nil {
			found = p
			return
		}
		cmd := exec.Command("go", "install", Module)
		cmd.Env = append(os.Environ(), "GOBIN="+bin)
		if out, err := cmd.CombinedOutput(); err != nil {
			findErr = fmt.Errorf("go install %s: %v\n%s", Module, err, out)
			return
		}
		found = p
	})
	return found, findErr
}

// Start runs a versitygw for the test (stopped at its end) and sets the
// AWS_* environment variables that s3store reads to its credentials.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := binary()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("versitygw is needed in CI: %v", err)
		}
		t.Skipf("no versitygw (go install %s): %v", Module, err)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", SecretKey)
	t.Setenv("AWS_REGION", Region)
	t.Setenv("AWS_CONFIG_FILE", os.DevNull)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", os.DevNull)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	s := &Server{Endpoint: "http://" + addr, addr: addr, dir: t.TempDir(), bin: bin}
	s.Restart(t)
	t.Cleanup(s.Stop)
	return s
}

// Restart starts the server again after Stop, on the same port and data.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		t.Fatal("s3test: server already running")
	}
	cmd := exec.Command(s.bin, "--access", AccessKey, "--secret", SecretKey, "--region", Region,
		"--port", s.addr, "--quiet", "posix", s.dir)
	log, err := os.Create(filepath.Join(s.dir, "..", "versitygw.log"))
	if err == nil {
		cmd.Stdout, cmd.Stderr = log, log
		defer log.Close()
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start versitygw: %v", err)
	}
	s.cmd = cmd
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", s.addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("versitygw did not listen on %s: %v", s.addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop ends the server (the store becomes unreachable); Restart brings
// it back.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Kill()
	s.cmd.Wait()
	s.cmd = nil
}

// Client is an S3 client of the server.
func (s *Server) Client(t testing.TB) *s3.Client {
	t.Helper()
	cfg, err := config.LoadDefaultConfig(context.Background(), config.WithRegion(Region),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(AccessKey, SecretKey, "")))
	if err != nil {
		t.Fatal(err)
	}
	return s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.BaseEndpoint = aws.String(s.Endpoint)
		o.UsePathStyle = true
	})
}

// NewBucket creates an empty bucket and returns its name.
func (s *Server) NewBucket(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("sitedrop-%d-%d", os.Getpid(), buckets.Add(1))
	if _, err := s.Client(t).CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		t.Fatalf("create bucket: %v", err)
	}
	return name
}

// URL is the --store URL of bucket (and prefix, may be empty).
func (s *Server) URL(bucket, prefix string) string {
	return "s3://" + bucket + "/" + prefix + "?endpoint=" + s.Endpoint + "&region=" + Region
}
