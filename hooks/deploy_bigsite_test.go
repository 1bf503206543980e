package hooks

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"sitedrop/sites/store"
)

// bigSiteFiles is the default --max-files: Cloudflare Pages' limit.
const bigSiteFiles = 20000

// bigSitePath is the site path of the i-th file of a generated big site:
// index.html, then pages in nested folders, as a generator's output has.
func bigSitePath(i int) string {
	if i == 0 {
		return "index.html"
	}
	return fmt.Sprintf("posts/%03d/page-%05d.html", i/100, i)
}

// bigSiteZip is a zip of n one-byte files.
func bigSiteZip(t testing.TB, n int) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := range n {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: bigSitePath(i), Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte("x"))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// bigSiteDigestBody is a JSON deploy of n files that all name content h.
func bigSiteDigestBody(t testing.TB, slug string, n int, h string) string {
	t.Helper()
	type entry struct {
		Path   string `json:"path"`
		SHA256 string `json:"sha256"`
	}
	files := make([]entry, n)
	for i := range files {
		files[i] = entry{bigSitePath(i), h}
	}
	b, err := json.Marshal(map[string]any{"slug": slug, "files": files})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDeployBigSiteDefaults deploys a 20,000-file site (the default
// --max-files) with every other limit at its default, as a zip and as a
// JSON deploy naming contents by sha256, and checks that one file more is
// refused with 413 naming the limit. Files are one byte, sharing one
// content, so the test stays cheap.
func TestDeployBigSiteDefaults(t *testing.T) {
	if testing.Short() {
		t.Skip("deploys 20,000 files")
	}
	d := DefaultConfig()
	if d.MaxFiles != bigSiteFiles {
		t.Fatalf("default --max-files is %d, want %d", d.MaxFiles, bigSiteFiles)
	}
	app, _ := newFixtureApp(t, func(c *Config) {
		c.MaxBody, c.MaxFiles, c.DeployMemory = d.MaxBody, d.MaxFiles, d.DeployMemory
	})
	defer app.Cleanup()
	mux := newMux(t, app)
	zipHeaders := withHeaders(bearer(keyPia), map[string]string{"Content-Type": "application/zip"})

	res, body := do(t, mux, http.MethodPost, "/deploy?slug=big-zip", string(bigSiteZip(t, bigSiteFiles)), zipHeaders)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("zip of %d files: %d %s", bigSiteFiles, res.StatusCode, body)
	}
	if code, b := siteGet(t, app, "big-zip.sites.test", "/"+strings.TrimSuffix(bigSitePath(bigSiteFiles-1), ".html")); code != 200 || b != "x" {
		t.Errorf("the last file of the zip deploy: %d %q", code, b)
	}

	h := store.HashBytes([]byte("x"))
	if res, body := do(t, mux, http.MethodPut, "/blobs/"+h, "x", bearer(keyPia)); res.StatusCode != http.StatusOK {
		t.Fatalf("upload: %d %s", res.StatusCode, body)
	}
	res, body = do(t, mux, http.MethodPost, "/deploy", bigSiteDigestBody(t, "big-json", bigSiteFiles, h), bearer(keyPia))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("JSON deploy by digest of %d files: %d %s", bigSiteFiles, res.StatusCode, body)
	}
	if code, b := siteGet(t, app, "big-json.sites.test", "/"+strings.TrimSuffix(bigSitePath(bigSiteFiles-1), ".html")); code != 200 || b != "x" {
		t.Errorf("the last file of the JSON deploy: %d %q", code, b)
	}

	want := fmt.Sprintf("Too many files: the limit is %d", bigSiteFiles)
	res, body = do(t, mux, http.MethodPost, "/deploy?slug=big-zip-over", string(bigSiteZip(t, bigSiteFiles+1)), zipHeaders)
	if res.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(body, want) {
		t.Errorf("zip of %d files: %d %s, want 413 %q", bigSiteFiles+1, res.StatusCode, body, want)
	}
	res, body = do(t, mux, http.MethodPost, "/deploy", bigSiteDigestBody(t, "big-json-over", bigSiteFiles+1, h), bearer(keyPia))
	if res.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(body, want) {
		t.Errorf("JSON deploy of %d files: %d %s, want 413 %q", bigSiteFiles+1, res.StatusCode, body, want)
	}
}

// TestBlobsMissingFollowsMaxFiles: POST /blobs/missing takes as many
// hashes as a deploy may have files (at least 20,000), so the CLI can ask
// about every file of the largest site --max-files allows.
func TestBlobsMissingFollowsMaxFiles(t *testing.T) {
	hashes := func(n int) string {
		hs := make([]string, n)
		for i := range hs {
			hs[i] = fmt.Sprintf("%064x", i)
		}
		b, _ := json.Marshal(map[string]any{"hashes": hs})
		return string(b)
	}
	for _, tc := range []struct {
		maxFiles, hashes, status int
	}{
		{10, maxMissingHashes, http.StatusOK},
		{10, maxMissingHashes + 1, http.StatusRequestEntityTooLarge},
		{maxMissingHashes + 5, maxMissingHashes + 5, http.StatusOK},
		{maxMissingHashes + 5, maxMissingHashes + 6, http.StatusRequestEntityTooLarge},
	} {
		t.Run(fmt.Sprintf("max-files %d, %d hashes", tc.maxFiles, tc.hashes), func(t *testing.T) {
			app, _ := newFixtureApp(t, func(c *Config) { c.MaxFiles = tc.maxFiles })
			defer app.Cleanup()
			res, body := do(t, newMux(t, app), http.MethodPost, "/blobs/missing", hashes(tc.hashes), bearer(keyPia))
			if res.StatusCode != tc.status {
				t.Fatalf("%d %s, want %d", res.StatusCode, body[:min(len(body), 200)], tc.status)
			}
			if tc.status == http.StatusRequestEntityTooLarge && !strings.Contains(body, fmt.Sprintf("Too many hashes: the limit is %d", max(tc.maxFiles, maxMissingHashes))) {
				t.Errorf("413 without the limit: %s", body)
			}
		})
	}
}
