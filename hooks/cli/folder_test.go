package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCollectFilesLinks: a link to a file of the folder is deployed as
// that file; links out of the folder, into hidden files, to folders or
// to nothing are skipped and named; a linked folder is walked.
func TestCollectFilesLinks(t *testing.T) {
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("not for the web"), 0o644)
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "pages"), 0o755)
	os.MkdirAll(filepath.Join(dir, ".git"), 0o755)
	os.WriteFile(filepath.Join(dir, "pages", "a.html"), []byte("<p>a</p>"), 0o644)
	os.WriteFile(filepath.Join(dir, ".git", "config"), []byte("[core]"), 0o644)
	for link, dest := range map[string]string{
		"inner.html": filepath.Join("pages", "a.html"),
		"out.txt":    filepath.Join(outside, "secret.txt"),
		"git.txt":    filepath.Join(".git", "config"),
		"folder":     "pages",
		"broken":     "missing.html",
	} {
		if err := os.Symlink(dest, filepath.Join(dir, link)); err != nil {
			t.Skipf("no symlinks here: %v", err)
		}
	}
	linked := filepath.Join(t.TempDir(), "site")
	os.Symlink(dir, linked)

	var warn strings.Builder
	files, err := collectFiles(linked, &warn)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range files {
		paths = append(paths, f.path)
	}
	if strings.Join(paths, " ") != "inner.html pages/a.html" {
		t.Errorf("deployed %q", paths)
	}
	if files[0].hash != files[1].hash {
		t.Error("the link was not read as its file")
	}
	for _, want := range []string{
		"skipped out.txt: a link out of the folder",
		"skipped git.txt: a link into a hidden file or folder",
		"skipped folder: a link to a folder or a special file",
		"skipped broken: a link that leads nowhere",
	} {
		if !strings.Contains(warn.String(), want) {
			t.Errorf("warnings %q lack %q", warn.String(), want)
		}
	}
}
