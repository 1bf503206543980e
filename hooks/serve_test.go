package hooks

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/hooks/server"
)

// liveServer is `sitedrop serve` running in process on a data dir, with
// real listeners.
type liveServer struct {
	app      *core.BaseApp
	sd       *built
	done     chan error
	stopOnce sync.Once
}

// copyData makes a private copy of a data template.
func copyData(t *testing.T, template string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(template)); err != nil {
		t.Fatal(err)
	}
	return dir
}

// startServe runs the serve command with args on dataDir and waits until
// waitAddr accepts connections.
func startServe(t *testing.T, dataDir string, tune func(*Config), waitAddr string, args ...string) *liveServer {
	t.Helper()
	app := core.NewBaseApp(core.BaseAppConfig{DataDir: dataDir})
	if err := app.Bootstrap(); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t)
	if tune != nil {
		tune(cfg)
	}
	sd, err := register(app, cfg)
	if err != nil {
		t.Fatal(err)
	}
	app.OnServe().BindFunc(func(se *core.ServeEvent) error {
		se.InstallerFunc = nil // no superuser: do not open a browser
		return se.Next()
	})
	cmd := server.NewServeCommand(app, &cfg.Serve, ServeSettings(cfg))
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	// certmagic's events, shown when the test fails
	var logBuf lockedBuffer
	cmd.SetErr(&logBuf)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("serve %v log:\n%s", args, logBuf.String())
		}
	})
	ls := &liveServer{app: app, sd: sd, done: make(chan error, 1)}
	go func() { ls.done <- cmd.Execute() }()
	t.Cleanup(func() { ls.stop(t) })

	deadline := time.Now().Add(20 * time.Second)
	for {
		select {
		case err := <-ls.done:
			t.Fatalf("serve %v ended at once: %v", args, err)
		default:
		}
		if c, err := net.Dial("tcp", waitAddr); err == nil {
			c.Close()
			return ls
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve %v: nothing listens on %s", args, waitAddr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop terminates the app as a SIGTERM does and waits for serve to end.
func (ls *liveServer) stop(t *testing.T) {
	ls.stopOnce.Do(func() {
		err := ls.app.OnTerminate().Trigger(&core.TerminateEvent{App: ls.app}, func(e *core.TerminateEvent) error {
			return e.App.ResetBootstrapState()
		})
		if err != nil {
			t.Errorf("terminate: %v", err)
		}
		select {
		case err := <-ls.done:
			if err != nil {
				t.Errorf("serve ended with %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("serve did not end after terminate")
		}
	})
}

// pinnedClient sends every request to addr, whatever the URL's host, and
// trusts roots for TLS. It follows no redirects.
func pinnedClient(addr string, roots *x509.CertPool) *http.Client {
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	return &http.Client{
		Timeout: 60 * time.Second,
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return dialer.DialContext(ctx, network, addr)
			},
			TLSClientConfig:     &tls.Config{RootCAs: roots},
			TLSHandshakeTimeout: 60 * time.Second,
			DisableKeepAlives:   true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// handshake connects to addr with SNI name and returns the certificate
// the server presents, verified against roots.
func handshake(addr, name string, roots *x509.CertPool) (*x509.Certificate, error) {
	d := &tls.Dialer{
		NetDialer: &net.Dialer{Timeout: 5 * time.Second},
		Config:    &tls.Config{ServerName: name, RootCAs: roots},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	certs := c.(*tls.Conn).ConnectionState().PeerCertificates
	if len(certs) == 0 {
		return nil, errors.New("no certificate")
	}
	return certs[0], nil
}

// get is a GET through client; it returns status, headers and body.
func get(t *testing.T, client *http.Client, url string) (int, http.Header, string) {
	t.Helper()
	res, err := client.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, string(body)
}

// loopback is 127.0.0.1:port.
func loopback(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

// portSuffix is ":port" for URLs on a port other than 443.
func portSuffix(port int) string { return fmt.Sprintf(":%d", port) }

// doHTTP sends a request through client and returns the response and its
// body.
func doHTTP(t *testing.T, client *http.Client, method, url, body string, headers map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

// jsonField is a string field of a JSON object.
func jsonField(t *testing.T, body, field string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("not JSON: %q", body)
	}
	s, _ := m[field].(string)
	return s
}
