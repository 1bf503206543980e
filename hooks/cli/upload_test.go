package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"sitedrop/hooks/internal/clitest"
	"sitedrop/sites"
	"sitedrop/sites/store"
)

// fakeBlobServer is a sitedrop API that has some contents already: a
// deploy is refused until every content it names was uploaded. It counts
// the uploads in flight, and fails the upload of failHash. An upload
// whose bytes are not the content its hash names is refused with 400, as
// a sitedrop server refuses it.
type fakeBlobServer struct {
	*httptest.Server
	failHash string
	// refuseInline answers 413 to a deploy with inline contents, as a
	// server whose --max-body is below the CLI's inline budget would.
	refuseInline bool
	deploys      int // deploy requests received

	mu          sync.Mutex
	have        map[string]bool
	uploads     []string // hashes, in the order they arrived
	inFlight    int
	maxInFlight int
	// twoInFlight closes once two uploads were in flight together: the
	// first upload waits for it (a second second at most), so that an
	// uploader that does send them at once is seen doing it.
	twoInFlight chan struct{}
	closed      bool
}

func newFakeBlobServer(t *testing.T, have ...string) *fakeBlobServer {
	f := &fakeBlobServer{have: map[string]bool{}, twoInFlight: make(chan struct{})}
	for _, h := range have {
		f.have[h] = true
	}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeBlobServer) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/blobs/missing":
		var req struct{ Hashes []string }
		json.Unmarshal(body, &req)
		missing := []string{}
		f.mu.Lock()
		for _, h := range req.Hashes {
			if !f.have[h] {
				missing = append(missing, h)
			}
		}
		f.mu.Unlock()
		json.NewEncoder(w).Encode(map[string]any{"missing": missing})
	case r.Method == http.MethodPut && strings.HasPrefix(r.URL.Path, "/blobs/"):
		h := strings.TrimPrefix(r.URL.Path, "/blobs/")
		f.mu.Lock()
		f.inFlight++
		f.maxInFlight = max(f.maxInFlight, f.inFlight)
		f.uploads = append(f.uploads, h)
		first := len(f.uploads) == 1
		if f.inFlight >= 2 && !f.closed {
			close(f.twoInFlight)
			f.closed = true
		}
		f.mu.Unlock()
		if first {
			select {
			case <-f.twoInFlight:
			case <-time.After(time.Second):
			}
		}
		f.mu.Lock()
		f.inFlight--
		got := store.HashBytes(body)
		ok := h != f.failHash && got == h
		if ok {
			f.have[h] = true
		}
		f.mu.Unlock()
		if got != h {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"error":"content does not match its name: its sha256 is %s"}`, got)
			return
		}
		if !ok {
			w.WriteHeader(http.StatusInsufficientStorage)
			w.Write([]byte(`{"error":"disk full"}`))
			return
		}
		w.Write([]byte(`{}`))
	case r.URL.Path == "/deploy":
		var req struct {
			Files []struct {
				Path, SHA256 string
				Content      *string
			}
		}
		json.Unmarshal(body, &req)
		f.mu.Lock()
		defer f.mu.Unlock()
		f.deploys++
		inline := false
		for _, e := range req.Files {
			inline = inline || e.Content != nil
		}
		if f.refuseInline && inline {
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			w.Write([]byte(`{"error":"Request body too large"}`))
			return
		}
		for _, e := range req.Files {
			if e.Content == nil && !f.have[e.SHA256] {
				w.WriteHeader(http.StatusBadRequest)
				fmt.Fprintf(w, `{"error":"%s: content with sha256 %s %s"}`, e.Path, e.SHA256, sites.ContentMissingPhrase)
				return
			}
		}
		w.Write([]byte(`{"id":"dep000000000001","slug":"big","url":"http://big.sites.test/"}`))
	default:
		http.NotFound(w, r)
	}
}

// writeSite writes n files of distinct content into a new folder and
// returns it and the files' hashes by name.
func writeSite(t *testing.T, n int) (string, map[string]string) {
	t.Helper()
	dir := t.TempDir()
	hashes := map[string]string{}
	for i := range n {
		name := fmt.Sprintf("page-%03d.html", i)
		data := []byte(fmt.Sprintf("<p>page %d</p>", i))
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		hashes[name] = store.HashBytes(data)
	}
	return dir, hashes
}

// TestCLIUploadsMissingInParallel: the CLI uploads only the contents the
// server lacks, several at once, and shows its progress in plain lines
// when its error output is not a terminal.
func TestCLIUploadsMissingInParallel(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	dir, hashes := writeSite(t, 40)
	srv := newFakeBlobServer(t, hashes["page-000.html"], hashes["page-001.html"])

	out, errOut, err := clitest.Run(t, newDeployCommand(), "--server", srv.URL, "--key", keyPia, dir)
	if err != nil {
		t.Fatalf("deploy: %v\n%s", err, errOut)
	}
	if strings.TrimSpace(out) != "http://big.sites.test/" {
		t.Errorf("printed %q", out)
	}
	srv.mu.Lock()
	uploads, maxInFlight := append([]string(nil), srv.uploads...), srv.maxInFlight
	srv.mu.Unlock()
	if len(uploads) != 38 {
		t.Errorf("%d uploads, want the 38 missing", len(uploads))
	}
	for _, h := range uploads {
		if h == hashes["page-000.html"] || h == hashes["page-001.html"] {
			t.Errorf("uploaded %s, which the server had", h)
		}
	}
	if maxInFlight < 2 {
		t.Errorf("at most %d upload in flight: not parallel", maxInFlight)
	}
	if !strings.Contains(errOut, "40 files, 38 to upload") {
		t.Errorf("no summary: %q", errOut)
	}
	if !strings.Contains(errOut, "uploading 38/38 files, 0.5/0.5 kB\n") {
		t.Errorf("no final progress line: %q", errOut)
	}
	if n := strings.Count(errOut, "uploading "); n < 2 || n > 11 {
		t.Errorf("%d progress lines, want a few (one a tenth): %q", n, errOut)
	}
	if strings.Contains(errOut, "\r") || strings.Contains(errOut, "\x1b") {
		t.Errorf("terminal codes in plain output: %q", errOut)
	}
}

// TestCLIUploadStopsAtFirstError: a failed upload stops the others, no
// deploy is sent again, and the error names the file.
func TestCLIUploadStopsAtFirstError(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	dir, hashes := writeSite(t, 200)
	srv := newFakeBlobServer(t)
	srv.failHash = hashes["page-000.html"]
	srv.refuseInline = true // so that every content is uploaded

	_, errOut, err := clitest.Run(t, newDeployCommand(), "--server", srv.URL, "--key", keyPia, dir)
	if err == nil || !strings.Contains(err.Error(), "upload page-000.html: disk full") {
		t.Fatalf("deploy: %v, want the failed upload named\n%s", err, errOut)
	}
	srv.mu.Lock()
	n := len(srv.uploads)
	srv.mu.Unlock()
	if n > 100 {
		t.Errorf("%d of 200 uploads sent after the first failed", n)
	}
}

// TestUploadProgressLines: the progress line's format, plain and on a
// terminal.
func TestUploadProgressLines(t *testing.T) {
	var plain strings.Builder
	p := newUploadProgress(&plain, false, 3411, 40_100_000)
	for range 3411 {
		p.add(40_100_000 / 3411)
	}
	p.finish()
	lines := strings.Split(strings.TrimSpace(plain.String()), "\n")
	if len(lines) != 10 || lines[9] != "uploading 3,411/3,411 files, 40.1/40.1 MB" || lines[0] != "uploading 342/3,411 files, 4.0/40.1 MB" {
		t.Errorf("plain lines: %q", lines)
	}
	var tty strings.Builder
	p = newUploadProgress(&tty, true, 2, 2_000_000)
	p.add(1_000_000)
	p.add(1_000_000)
	p.finish()
	if got := tty.String(); !strings.HasPrefix(got, "\ruploading 1/2 files, 1.0/2.0 MB\x1b[K") || !strings.HasSuffix(got, "\ruploading 2/2 files, 2.0/2.0 MB\x1b[K\n") {
		t.Errorf("terminal: %q", got)
	}
}

// TestCLIInlinesManyMissing: when many contents are missing (a big
// site's first deploy), they go inline in the deploy request instead of
// one upload each; a server whose body limit refuses that request gets
// them uploaded after all.
func TestCLIInlinesManyMissing(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	dir, _ := writeSite(t, inlineMinFiles+20)

	srv := newFakeBlobServer(t)
	_, errOut, err := clitest.Run(t, newDeployCommand(), "--server", srv.URL, "--key", keyPia, dir)
	if err != nil {
		t.Fatalf("deploy: %v\n%s", err, errOut)
	}
	srv.mu.Lock()
	uploads, deploys := len(srv.uploads), srv.deploys
	srv.mu.Unlock()
	if uploads != 0 || deploys != 2 || !strings.Contains(errOut, "120 of them in the deploy request, 0 uploaded first") {
		t.Errorf("%d uploads, %d deploys: %q; want every content inline in the second deploy", uploads, deploys, errOut)
	}

	small := newFakeBlobServer(t)
	small.refuseInline = true
	_, errOut, err = clitest.Run(t, newDeployCommand(), "--server", small.URL, "--key", keyPia, dir)
	if err != nil {
		t.Fatalf("deploy to a server with a small body limit: %v\n%s", err, errOut)
	}
	small.mu.Lock()
	uploads = len(small.uploads)
	small.mu.Unlock()
	if uploads != inlineMinFiles+20 {
		t.Errorf("%d uploads after the 413, want all %d", uploads, inlineMinFiles+20)
	}
}

// TestPlanInline: the smallest contents go inline within the budget.
func TestPlanInline(t *testing.T) {
	todo := []localFile{{hash: "a", size: 50}, {hash: "b", size: 10}, {hash: "c", size: 30}, {hash: "d", size: 20}}
	inlined, rest := planInline(todo, 60)
	if len(inlined) != 3 || !inlined["b"] || !inlined["d"] || !inlined["c"] || len(rest) != 1 || rest[0].hash != "a" {
		t.Errorf("inlined %v, rest %v", inlined, rest)
	}
}

// TestUploadBlobRefusesChangedFile: a file changed between hashing and
// upload is refused, not deployed with the wrong content: by the client
// when its size changed, by the server (400, the content does not match
// its hash) when only its bytes did, and the error says why.
func TestUploadBlobRefusesChangedFile(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir()) // no saved login of the machine's
	t.Setenv("HOME", t.TempDir())
	changing := filepath.Join(t.TempDir(), "changing.html")
	os.WriteFile(changing, []byte("<p>before</p>"), 0o644)
	lf, err := hashLocalFile("index.html", changing)
	if err != nil {
		t.Fatal(err)
	}
	api, err := newAPIClient(newFakeBlobServer(t).URL, keyPia)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(changing, []byte("<p>after!</p>"), 0o644) // same size
	if err := uploadBlob(t.Context(), api, lf); err == nil || !strings.Contains(err.Error(), "did it change during the deploy") {
		t.Errorf("same size, other bytes: %v", err)
	}
	os.WriteFile(changing, []byte("<p>longer now</p>"), 0o644)
	if err := uploadBlob(t.Context(), api, lf); err == nil || !strings.Contains(err.Error(), "changed during the deploy") {
		t.Errorf("other size: %v", err)
	}
}
