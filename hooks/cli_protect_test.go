package hooks

import (
	"archive/zip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sitedrop/hooks/internal/clitest"
)

// TestCLIDeployProtected: `sitedrop deploy --password --protect` deploys
// a folder and an archive protected, and prints the share link.
func TestCLIDeployProtected(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	clitest.CleanEnv(t)
	addr := loopback(freePort(t))
	srv := startServe(t, copyData(t, templates.fixtures(t)), nil, addr, "--http", addr)
	server := "http://" + addr

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte("<p>private</p>"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, err := clitest.Run(t, cliCommand(t, "deploy"), "--server", server, "--key", keyPia, "--slug", "cli-private", "--password", "cli password", "--protect", dir)
	if err != nil || !strings.Contains(errOut, "Share link (lets its holder in): http://cli-private.sites.test") {
		t.Fatalf("folder deploy: %v %q", err, errOut)
	}
	if code, b := siteGetLive(t, server, "cli-private.sites.test", "/"); code != 401 || strings.Contains(b, "<p>private</p>") {
		t.Fatalf("protected folder site: %d", code)
	}

	zipPath := filepath.Join(t.TempDir(), "site.zip")
	zf, _ := os.Create(zipPath)
	zw := zip.NewWriter(zf)
	w, _ := zw.Create("index.html")
	io.WriteString(w, "<p>zipped private</p>")
	zw.Close()
	zf.Close()
	_, errOut, err = clitest.Run(t, cliCommand(t, "deploy"), "--server", server, "--key", keyPia, "--slug", "cli-zipped", "--password", "zip password", zipPath)
	if err != nil || strings.Contains(errOut, "Share link") {
		t.Fatalf("archive deploy: %v %q", err, errOut)
	}
	site, err := srv.sd.svc.LoadSite("cli-zipped")
	if err != nil || site.Protection == nil || !site.Protection.CheckPassword("zip password") || site.Protection.Link {
		t.Fatalf("archive site protection: %v %+v", err, site)
	}
	if _, _, err := clitest.Run(t, cliCommand(t, "deploy"), "--server", server, "--key", keyPia, "--slug", "cli-short", "--password", "short", dir); err == nil || !strings.Contains(err.Error(), "password must be 8 to 128 characters") {
		t.Fatalf("short password: %v", err)
	}
}
