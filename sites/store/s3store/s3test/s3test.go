// Package s3test runs a real S3 server for tests: versitygw v1.8.0 (posix
// backend, in a temporary folder) on a free loopback port.
//
// The server is built from versitygw's Go packages into the test binary
// itself (a test-only dependency: only tests import this package), so
// `go test` compiles it before any test's timer starts and caches it like
// any other package; nothing is looked up on PATH or installed while the
// tests run, and nothing is missing on a new machine.
//
// Each server runs in a child process that is the test binary again: Start
// executes os.Executable with serveEnv set, and this package's init, which
// runs before the test binary's main, serves S3 there instead of running
// the tests. It is not run inside the test process because versitygw's
// posix backend works relative to the process's working directory: it
// changes directory to its root folder, which would move every test of the
// process (and allow one server per process). A child also makes Stop
// real: the process is killed, and its port refuses connections.
package s3test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
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
	"github.com/versity/versitygw/backend/meta"
	"github.com/versity/versitygw/backend/posix"
	"github.com/versity/versitygw/embedgw"
	"github.com/versity/versitygw/s3api"
)

// Test credentials of the server's root user.
const (
	AccessKey = "sitedroptest"
	SecretKey = "sitedroptestsecret"
	Region    = "us-east-1"
)

// serveEnv, set in a child's environment to the address to listen on,
// makes the test binary a server (see init).
const serveEnv = "SITEDROP_S3TEST_SERVE"

// readyLine is what a server writes on its ready pipe (file descriptor 3)
// once it listens.
const readyLine = "listening"

// startTimeout bounds how long a server may take to listen: on a busy
// machine, under the race detector, starting a large test binary again
// takes a few seconds.
const startTimeout = 60 * time.Second

// Server is a running versitygw.
type Server struct {
	// Endpoint is its base URL, http://127.0.0.1:<port>.
	Endpoint string
	addr     string
	dir      string
	mu       sync.Mutex
	cmd      *exec.Cmd
	// alive is the parent's end of the child's stdin: the child stops
	// when it closes, so a server never outlives the test process.
	alive *os.File
}

var buckets atomic.Int64

func init() {
	addr, ok := os.LookupEnv(serveEnv)
	if !ok {
		return
	}
	if err := serve(addr); err != nil {
		fmt.Fprintf(os.Stderr, "s3test: %v\n", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// serve runs versitygw on addr with the working directory as its posix
// root, until its standard input closes (Stop kills it sooner).
func serve(addr string) error {
	root, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("working directory: %w", err)
	}
	// Object metadata in extended attributes, versitygw's default; where
	// the file system has none (tmpfs before Linux 6.6), in a sidecar
	// folder beside the root (never inside it), as `versitygw posix
	// --sidecar` does.
	var ms meta.MetadataStorer = meta.XattrMeta{}
	opts := posix.PosixOpts{CopyObjectThreshold: 5 << 30} // versitygw's default
	if err := (meta.XattrMeta{}).Test(root); err != nil {
		side := filepath.Join(filepath.Dir(root), "meta")
		if err := os.MkdirAll(side, 0o755); err != nil {
			return fmt.Errorf("sidecar folder: %w", err)
		}
		sc, err := meta.NewSideCar(side)
		if err != nil {
			return fmt.Errorf("sidecar metadata: %w", err)
		}
		ms, opts.SideCarDir = sc, side
	}
	be, err := posix.New(root, ms, opts)
	if err != nil {
		return fmt.Errorf("posix backend on %s: %w", root, err)
	}
	ready := os.NewFile(3, "ready")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		io.Copy(io.Discard, os.Stdin) // until the parent goes away
		cancel()
	}()
	// The defaults of the versitygw command, but quiet.
	err = embedgw.RunVersityGW(ctx, be, &embedgw.Config{
		RootUserAccess:    AccessKey,
		RootUserSecret:    SecretKey,
		Region:            Region,
		Ports:             []string{addr},
		MaxConnections:    250000,
		MaxRequests:       100000,
		MultipartMaxParts: 10000,
		Quiet:             true,
		S3Options: []s3api.Option{s3api.WithOnListen(func() {
			fmt.Fprintln(ready, readyLine)
			ready.Close()
		})},
	})
	if err != nil {
		return fmt.Errorf("versitygw on %s: %w", addr, err)
	}
	return nil
}

// Start runs a versitygw for the test (stopped at its end) and sets the
// AWS_* environment variables that s3store reads to its credentials.
func Start(t testing.TB) *Server {
	t.Helper()
	t.Setenv("AWS_ACCESS_KEY_ID", AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", SecretKey)
	t.Setenv("AWS_REGION", Region)
	t.Setenv("AWS_CONFIG_FILE", os.DevNull)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", os.DevNull)
	dir := filepath.Join(t.TempDir(), "root")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	s := &Server{dir: dir}
	t.Cleanup(s.Stop)
	// The port is free when chosen, but another process may take it
	// before the server binds it: choose again then.
	var err error
	for range 3 {
		if s.addr, err = freePort(); err != nil {
			t.Fatal(err)
		}
		s.Endpoint = "http://" + s.addr
		if err = s.start(); err == nil {
			return s
		}
	}
	t.Fatal(err)
	return nil
}

// freePort returns a loopback address no one listens on.
func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// Restart starts the server again after Stop, on the same port and data.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	if err := s.start(); err != nil {
		t.Fatal(err)
	}
}

// start runs the server's process and waits until it listens.
func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return errors.New("s3test: server already running")
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("s3test: the test binary: %w", err)
	}
	logPath := filepath.Join(filepath.Dir(s.dir), "versitygw.log")
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("s3test: log: %w", err)
	}
	defer log.Close()
	stdin, alive, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("s3test: pipe: %w", err)
	}
	defer stdin.Close()
	readyR, readyW, err := os.Pipe()
	if err != nil {
		alive.Close()
		return fmt.Errorf("s3test: pipe: %w", err)
	}
	defer readyR.Close()
	cmd := exec.Command(exe)
	cmd.Dir = s.dir
	cmd.Env = append(os.Environ(), serveEnv+"="+s.addr)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, log, log
	cmd.ExtraFiles = []*os.File{readyW}
	err = cmd.Start()
	readyW.Close()
	if err != nil {
		alive.Close()
		return fmt.Errorf("s3test: start versitygw: %w", err)
	}
	// The ready pipe says "listening", or closes without a word when the
	// server fails (then its log says why).
	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(readyR).ReadString('\n')
		line <- strings.TrimSpace(l)
	}()
	var got string
	select {
	case got = <-line:
	case <-time.After(startTimeout):
	}
	if got != readyLine {
		cmd.Process.Kill()
		cmd.Wait()
		alive.Close()
		out, _ := os.ReadFile(logPath)
		return fmt.Errorf("s3test: versitygw did not listen on %s within %v:\n%s", s.addr, startTimeout, out)
	}
	s.cmd, s.alive = cmd, alive
	return nil
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
	s.alive.Close()
	s.cmd, s.alive = nil, nil
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
