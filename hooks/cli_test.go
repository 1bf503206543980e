package hooks

import (
	"archive/zip"
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"sitedrop/hooks/cli"
	"sitedrop/hooks/internal/clitest"
	"sitedrop/sites"
)

// cliCommand is the client command of that name, as main adds it.
func cliCommand(t *testing.T, name string) *cobra.Command {
	t.Helper()
	for _, c := range cli.Commands() {
		if c.Name() == name {
			return c
		}
	}
	t.Fatalf("no client command %q", name)
	return nil
}

// TestCLIAgainstRealServer deploys a folder of 200 files with the real
// CLI to a real server on loopback, redeploys after changing one file
// (one blob uploaded, as the server counts), lists versions, rolls back,
// lists and removes.
func TestCLIAgainstRealServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	clitest.CleanEnv(t) // no saved login of the machine's
	addr := loopback(freePort(t))
	srv := startServe(t, copyData(t, templates.fixtures(t)), func(c *Config) {
		c.MaxFiles = 500
		c.MaxBody = 1 << 20
	}, addr, "--http", addr)
	server := "http://" + addr
	store := srv.sd.svc.Store()
	// the server's start made the blob store's folders: no deploy makes one
	if fs, ok := store.(interface{ Root() string }); !ok {
		t.Errorf("not the file store: %T", store)
	} else if entries, err := os.ReadDir(fs.Root()); len(entries) != 256 {
		t.Errorf("%d entries in the blob store at the start (%v), want its 256 folders", len(entries), err)
	}
	blobs := func() int {
		n := 0
		store.Walk(t.Context(), func(string, time.Time) error { n++; return nil })
		return n
	}

	dir := t.TempDir()
	write := func(name, body string) {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("index.html", "<p>version one</p>")
	for i := range 199 {
		write(fmt.Sprintf("pages/p%03d.html", i), fmt.Sprintf("<p>page %d</p>", i)) // small: no variants
	}
	write(".git/config", "not deployed")

	out, errOut, err := clitest.Run(t, cliCommand(t, "deploy"), "--server", server, "--key", keyPia, "--slug", "cli-site", dir)
	if err != nil {
		t.Fatalf("deploy: %v\n%s", err, errOut)
	}
	if strings.TrimSpace(out) != "http://cli-site.sites.test:"+strings.Split(addr, ":")[1]+"/" {
		t.Errorf("deploy printed %q", out)
	}
	if !strings.Contains(errOut, "200 files, 200 to upload") {
		t.Errorf("deploy progress: %q", errOut)
	}
	if want := "report: 100+ pages without a title (first: index.html)\n"; !strings.Contains(errOut, want) {
		t.Errorf("deploy did not print the report's summary %q: %q", want, errOut)
	}
	rec, err := srv.app.FindFirstRecordByData(sites.DeploymentsCollection, "slug", "cli-site")
	if err != nil {
		t.Fatal(err)
	}
	id := rec.Id

	before := blobs()
	write("index.html", "<p>version two</p>")
	write("_redirects", "/old /\n/api/* https://api.example/:splat 200\n")
	_, errOut, err = clitest.Run(t, cliCommand(t, "deploy"), "--server", server, "--key", keyPia, "--id", id, dir)
	if err != nil {
		t.Fatalf("redeploy: %v\n%s", err, errOut)
	}
	if !strings.Contains(errOut, "201 files, 2 to upload") {
		t.Errorf("redeploy progress: %q", errOut)
	}
	if want := "warning: _redirects line 2: /api/* https://api.example/:splat 200: proxying to another origin is not supported\n"; !strings.Contains(errOut, want) {
		t.Errorf("redeploy did not print the rule warning %q: %q", want, errOut)
	}
	if got := blobs(); got != before+2 {
		t.Errorf("blobs %d after changing one file and adding one, want %d (two uploads)", got, before+2)
	}
	if _, b := siteGetLive(t, server, "cli-site.sites.test", "/"); !strings.Contains(b, "version two") {
		t.Fatalf("after redeploy: %q", b)
	}

	out, _, err = clitest.Run(t, cliCommand(t, "versions"), "--server", server, "--key", keyPia, id)
	if err != nil || !strings.Contains(out, "VERSION") || !strings.Contains(out, "live") {
		t.Fatalf("versions: %v %q", err, out)
	}
	out, _, err = clitest.Run(t, cliCommand(t, "rollback"), "--server", server, "--key", keyPia, id, "1")
	if err != nil || !strings.Contains(out, "Version 1 of cli-site is live") {
		t.Fatalf("rollback: %v %q", err, out)
	}
	if _, b := siteGetLive(t, server, "cli-site.sites.test", "/"); !strings.Contains(b, "version one") {
		t.Fatalf("after rollback: %q", b)
	}
	if _, _, err := clitest.Run(t, cliCommand(t, "rollback"), "--server", server, "--key", keyPia, id, "9"); err == nil || !strings.Contains(err.Error(), "Version not found") {
		t.Errorf("rollback to a missing version: %v", err)
	}
	out, _, err = clitest.Run(t, cliCommand(t, "ls"), "--server", server, "--key", keyPia)
	if err != nil || !strings.Contains(out, "cli-site") {
		t.Fatalf("ls: %v %q", err, out)
	}
	if _, _, err := clitest.Run(t, cliCommand(t, "ls"), "--server", server, "--key", keyUnknown); err == nil || !strings.Contains(err.Error(), "Unauthorized (HTTP 401)") {
		t.Errorf("ls with a bad key: %v", err)
	}
	if _, _, err := clitest.Run(t, cliCommand(t, "versions"), "--server", server, id); err == nil || !strings.Contains(err.Error(), "run sitedrop login") {
		t.Errorf("versions without a key: %v", err)
	}
	out, _, err = clitest.Run(t, cliCommand(t, "rm"), "--server", server, "--key", keyPia, id)
	if err != nil || !strings.Contains(out, "deleted") {
		t.Fatalf("rm: %v %q", err, out)
	}
	if code, _ := siteGetLive(t, server, "cli-site.sites.test", "/"); code != 404 {
		t.Errorf("after rm the site answers %d", code)
	}

	// HTML whose head the server fills (a title): an unchanged redeploy
	// still uploads nothing, as the server keeps the bytes it was sent.
	titled := t.TempDir()
	for i := range 20 {
		os.WriteFile(filepath.Join(titled, fmt.Sprintf("p%d.html", i)), []byte(fmt.Sprintf("<p>%d</p>", i)), 0o644)
	}
	if _, errOut, err = clitest.Run(t, cliCommand(t, "deploy"), "--server", server, "--key", keyPia, "--slug", "titled", "--title", "Titled", titled); err != nil {
		t.Fatalf("titled deploy: %v %s", err, errOut)
	}
	trec, err := srv.app.FindFirstRecordByData(sites.DeploymentsCollection, "slug", "titled")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.sd.svc.CollectGarbage(t.Context(), 0); err != nil {
		t.Fatal(err)
	}
	// deploying to one's own slug again updates it; unchanged, nothing
	// is uploaded
	_, errOut, err = clitest.Run(t, cliCommand(t, "deploy"), "--server", server, "--key", keyPia, "--slug", "titled", titled)
	if err != nil || !strings.Contains(errOut, "20 files, 0 to upload") || !strings.Contains(errOut, "Updating titled (deployment "+trec.Id+")") {
		t.Fatalf("unchanged titled redeploy: %v %q", err, errOut)
	}
	// another account's slug is refused before anything is uploaded
	os.WriteFile(filepath.Join(titled, "new.html"), []byte("<p>never uploaded</p>"), 0o644)
	_, errOut, err = clitest.Run(t, cliCommand(t, "deploy"), "--server", server, "--key", keyPia, "--slug", "alice-site", titled)
	if err == nil || !strings.Contains(err.Error(), "Slug already taken") || strings.Contains(errOut, "to upload") {
		t.Fatalf("deploy to a taken slug: %v %q", err, errOut)
	}
	os.Remove(filepath.Join(titled, "new.html"))
	notes := filepath.Join(t.TempDir(), "notes.txt")
	os.WriteFile(notes, []byte("not a page"), 0o644)
	if _, _, err := clitest.Run(t, cliCommand(t, "deploy"), "--server", server, "--key", keyPia, notes); err == nil || !strings.Contains(err.Error(), "an .html file") {
		t.Errorf("deploying a file that is not HTML: %v", err)
	}

	// An archive goes up as it is, streamed from disk.
	zipPath := filepath.Join(t.TempDir(), "site.zip")
	zf, _ := os.Create(zipPath)
	zw := zip.NewWriter(zf)
	for name, body := range map[string]string{"dist/index.html": "<p>zipped</p>", "dist/app.js": strings.Repeat("let x = 1;\n", 500)} {
		w, _ := zw.Create(name)
		io.WriteString(w, body)
	}
	zw.Close()
	zf.Close()
	if out, errOut, err := clitest.Run(t, cliCommand(t, "deploy"), "--server", server, "--key", keyPia, "--slug", "zipped", "--title", "Zipped", zipPath); err != nil || !strings.Contains(out, "zipped.sites.test") {
		t.Fatalf("archive deploy: %v %q %q", err, out, errOut)
	}
	if _, b := siteGetLive(t, server, "zipped.sites.test", "/"); !strings.Contains(b, "<p>zipped</p>") || !strings.Contains(b, "<title>Zipped</title>") {
		t.Fatalf("archive site: %q", b)
	}
	if _, b := siteGetLive(t, server, "zipped.sites.test", "/app.js"); b != strings.Repeat("let x = 1;\n", 500) {
		t.Fatalf("archive script: %d bytes", len(b))
	}

	// A large archive to a taken slug is answered 409, whether the client
	// waits for 100-continue (the CLI: nothing is sent) or sends the body
	// at once (the server reads and drops it rather than reset the
	// connection under the client).
	bigZip := filepath.Join(t.TempDir(), "big.zip")
	bz, _ := os.Create(bigZip)
	bzw := zip.NewWriter(bz)
	noise := make([]byte, 900<<10)
	rand.Read(noise)
	w, _ := bzw.CreateHeader(&zip.FileHeader{Name: "noise.bin", Method: zip.Store})
	w.Write(noise)
	bzw.Close()
	bz.Close()
	if _, _, err := clitest.Run(t, cliCommand(t, "deploy"), "--server", server, "--key", keyPia, "--slug", "alice-site", bigZip); err == nil || !strings.Contains(err.Error(), "Slug already taken") {
		t.Errorf("CLI archive to a taken slug: %v", err)
	}
	zipBytes, _ := os.ReadFile(bigZip)
	req, _ := http.NewRequest(http.MethodPost, server+"/deploy?slug=alice-site", bytes.NewReader(zipBytes))
	req.Header.Set("Content-Type", "application/zip")
	req.Header.Set("Authorization", "Bearer "+keyPia)
	if res, err := http.DefaultClient.Do(req); err != nil {
		t.Errorf("archive to a taken slug without Expect: %v", err)
	} else {
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 409 {
			t.Errorf("archive to a taken slug without Expect: %d %s", res.StatusCode, b)
		}
	}

	// A small refused body whose client waits for 100 Continue gets its
	// answer at once, not after the client's wait (the server must not
	// wait for the body it refused).
	waiting := &http.Client{Transport: &http.Transport{ExpectContinueTimeout: 20 * time.Second}}
	req, _ = http.NewRequest(http.MethodPost, server+"/deploy?slug=alice-site", bytes.NewReader(zipBytes[:10<<10]))
	req.Header.Set("Content-Type", "application/zip")
	req.Header.Set("Authorization", "Bearer "+keyPia)
	req.Header.Set("Expect", "100-continue")
	started := time.Now()
	if res, err := waiting.Do(req); err != nil {
		t.Errorf("small archive with Expect to a taken slug: %v", err)
	} else {
		res.Body.Close()
		if res.StatusCode != 409 || time.Since(started) > 10*time.Second {
			t.Errorf("small archive with Expect to a taken slug: %d after %v", res.StatusCode, time.Since(started))
		}
	}

	// Through a front that redirects (as sitedrop's own plain HTTP
	// listener does under TLS), uploads are sent again, and an empty file
	// goes as an empty body.
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, server+r.URL.RequestURI(), http.StatusPermanentRedirect)
	}))
	defer front.Close()
	redirected := t.TempDir()
	os.WriteFile(filepath.Join(redirected, "index.html"), []byte("<p>through a redirect</p>"), 0o644)
	os.WriteFile(filepath.Join(redirected, "empty.txt"), nil, 0o644)
	if _, errOut, err := clitest.Run(t, cliCommand(t, "deploy"), "--server", front.URL, "--key", keyPia, "--slug", "redirected", redirected); err != nil {
		t.Fatalf("deploy through a redirect: %v %q", err, errOut)
	}
	if _, b := siteGetLive(t, server, "redirected.sites.test", "/"); b != "<p>through a redirect</p>" {
		t.Fatalf("redirected site: %q", b)
	}
	if code, b := siteGetLive(t, server, "redirected.sites.test", "/empty.txt"); code != 200 || b != "" {
		t.Fatalf("empty file: %d %q", code, b)
	}
	// a redirect the client does not follow (GET after a 303 would lose the
	// body) is an error, not a silent success
	see := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", server+r.URL.RequestURI())
		w.WriteHeader(http.StatusMultipleChoices)
	}))
	defer see.Close()
	if _, _, err := clitest.Run(t, cliCommand(t, "deploy"), "--server", see.URL, "--key", keyPia, redirected); err == nil || !strings.Contains(err.Error(), "redirected to") {
		t.Errorf("deploy to a server that answers 300: %v", err)
	}

	// Without a key: an anonymous deployment, bytes inline.
	_, errOut, err = clitest.Run(t, cliCommand(t, "deploy"), "--server", server, filepath.Join(dir, "index.html"))
	if err != nil || !strings.Contains(errOut, "unless claimed") {
		t.Fatalf("anonymous deploy: %v %q", err, errOut)
	}
}

// siteGetLive fetches a site page from a running server.
func siteGetLive(t *testing.T, server, host, path string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, server+path, nil)
	req.Host = host
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(res.Body)
	return res.StatusCode, b.String()
}

// TestCLILogin signs in with the real command: the code comes by e-mail
// (an in-process SMTP receiver), the key is saved 0600, and later
// commands use it.
func TestCLILogin(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	config := clitest.CleanEnv(t)
	rcv := newSMTPReceiver(t)
	addr := loopback(freePort(t))
	srv := startServe(t, copyData(t, templates.fixtures(t)), nil, addr, "--http", addr)
	useRealSMTP(t, srv.app, rcv) // not the settings: see useRealSMTP
	server := "http://" + addr

	stdin, typed := io.Pipe()
	cmd := cliCommand(t, "login")
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetIn(stdin)
	cmd.SetArgs([]string{"--server", server, "alice@example.com"})
	done := make(chan error, 1)
	go func() { done <- cmd.Execute() }()
	_, code := loginCodeFrom(t, rcv, "alice@example.com")
	fmt.Fprintln(typed, code)
	if err := <-done; err != nil {
		t.Fatalf("login: %v\n%s", err, errOut.String())
	}
	p := filepath.Join(config, "sitedrop", "credentials.json")
	st, err := os.Stat(p)
	if err != nil {
		t.Fatalf("credentials: %v", err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("credentials mode %v", st.Mode())
	}
	if !strings.Contains(out.String(), "Signed in to "+server) {
		t.Errorf("login printed %q", out.String())
	}
	// The saved key is used for the same server, with no --key.
	got, _, err := clitest.Run(t, cliCommand(t, "ls"), "--server", server)
	if err != nil || !strings.Contains(got, "alice-site") {
		t.Fatalf("ls with the saved key: %v %q", err, got)
	}
	// A wrong code: the server's error, exit non-zero.
	stdin2, typed2 := io.Pipe()
	cmd = cliCommand(t, "login")
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	cmd.SetIn(stdin2)
	cmd.SetArgs([]string{"--server", server, "alice@example.com"})
	go func() { done <- cmd.Execute() }()
	loginCodeFrom(t, rcv, "alice@example.com")
	fmt.Fprintln(typed2, "00000000")
	if err := <-done; err == nil {
		t.Error("a wrong code signed in")
	}
}
