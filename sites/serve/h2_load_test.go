package serve

import (
	"context"
	"crypto/tls"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"sitedrop/sites"
	"sitedrop/sites/store"
)

// TestH2LoadServer is a harness for measuring, not a test: with
// SITEDROP_H2_LOAD=DIR it deploys the files of DIR (bench/genfiles'
// output) as the site "bench" and serves it over TLS (ALPN h2, an ECDSA
// P-256 certificate for *.sites.test) through the site server on two
// ports: H2Server on SITEDROP_H2_OURS (default 127.0.0.1:18443), and
// Go's own HTTP/2 server on SITEDROP_H2_GO (default 127.0.0.1:18444),
// until SIGTERM. See bench/README.md, "HTTP/2 for site hosts".
func TestH2LoadServer(t *testing.T) {
	dir := os.Getenv("SITEDROP_H2_LOAD")
	if dir == "" {
		t.Skip("a measuring harness: set SITEDROP_H2_LOAD=DIR (see bench/README.md)")
	}
	var files []sites.File
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".gz") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		files = append(files, sites.File{Path: filepath.ToSlash(rel), ContentType: http.DetectContentType(data), Data: data})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range files {
		switch filepath.Ext(f.Path) {
		case ".html":
			files[i].ContentType = htmlType
		case ".js":
			files[i].ContentType = "text/javascript; charset=utf-8"
		}
	}
	blobStore, err := store.NewFSStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m, blobs, err := sites.DeployedFiles(context.Background(), files)
	if err != nil {
		t.Fatal(err)
	}
	for h, data := range blobs {
		if err := blobStore.Put(context.Background(), h, data); err != nil {
			t.Fatal(err)
		}
	}
	site := sites.Site{ID: "bench", Slug: "bench", Status: sites.StatusActive, Files: m}
	srv := NewServer(func(string) (*sites.Site, error) { cp := site; return &cp, nil }, blobStore)
	handler := siteHandler(srv)
	cfg := &tls.Config{Certificates: []tls.Certificate{testCert()}, NextProtos: []string{"h2"}}

	ours := NewH2Server(H2Options{Handler: handler, SiteHost: isTestSiteHost})
	// the main listener's Conn under TLS, as in production
	tcpOurs, err := net.Listen("tcp", envOr("SITEDROP_H2_OURS", "127.0.0.1:18443"))
	if err != nil {
		t.Fatal(err)
	}
	lnOurs := tls.NewListener(NewListener(tcpOurs, nil, nil), cfg)
	go func() {
		for {
			c, err := lnOurs.Accept()
			if err != nil {
				return
			}
			go func() {
				tc := c.(*tls.Conn)
				if tc.Handshake() != nil {
					tc.Close()
					return
				}
				ours.ServeConn(tc)
			}()
		}
	}()
	lnGo, err := net.Listen("tcp", envOr("SITEDROP_H2_GO", "127.0.0.1:18444"))
	if err != nil {
		t.Fatal(err)
	}
	goSrv := &http.Server{Handler: handler, TLSConfig: cfg.Clone(), ErrorLog: log.New(io.Discard, "", 0), ConnContext: ConnContext}
	go goSrv.ServeTLS(NewListener(lnGo, nil, nil), "", "")
	t.Logf("H2Server on %s, Go's on %s", lnOurs.Addr(), lnGo.Addr())
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, os.Interrupt)
	<-stop
	lnOurs.Close()
	ours.Close()
	goSrv.Close()
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
