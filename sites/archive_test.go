package sites

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
)

// entry of a test archive: a regular file unless mode says otherwise.
type entry struct {
	name, body string
	mode       fs.FileMode
	tarType    byte
}

func makeZip(t testing.TB, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		h.SetMode(0o644 | e.mode)
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(e.body))
	}
	zw.Close()
	return buf.Bytes()
}

func makeTarGz(t testing.TB, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		typ := e.tarType
		if typ == 0 {
			typ = tar.TypeReg
		}
		h := &tar.Header{Name: e.name, Mode: 0o644, Typeflag: typ, Linkname: "target"}
		if typ == tar.TypeReg {
			h.Size = int64(len(e.body))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if typ == tar.TypeReg {
			tw.Write([]byte(e.body))
		}
	}
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

func TestReadArchive(t *testing.T) {
	lim := ArchiveLimits{MaxFiles: 3, MaxBytes: 1000}
	for _, c := range []struct {
		name    string
		format  string
		data    []byte
		want    map[string]string // path → content
		status  int
		errPart string
	}{
		{"zip, top folder stripped", ArchiveZip, makeZip(t, entry{name: "site/"}, entry{name: "site/index.html", body: "<p>hi</p>"}, entry{name: "site/css/a.css", body: "a{}"}),
			map[string]string{"index.html": "<p>hi</p>", "css/a.css": "a{}"}, 0, ""},
		{"zip, two top folders kept", ArchiveZip, makeZip(t, entry{name: "a/x.txt", body: "1"}, entry{name: "b/y.txt", body: "2"}),
			map[string]string{"a/x.txt": "1", "b/y.txt": "2"}, 0, ""},
		{"tar.gz", ArchiveTarGz, makeTarGz(t, entry{name: "./dist/index.html", body: "home"}, entry{name: "./dist/app.js", body: "js"}),
			map[string]string{"index.html": "home", "app.js": "js"}, 0, ""},
		{"zip slip", ArchiveZip, makeZip(t, entry{name: "../../etc/passwd", body: "x"}), nil, 400, "leaves the archive"},
		{"tar slip", ArchiveTarGz, makeTarGz(t, entry{name: "a/../../x", body: "x"}), nil, 400, "leaves the archive"},
		{"absolute path", ArchiveTarGz, makeTarGz(t, entry{name: "/etc/x", body: "x"}), nil, 400, "absolute path"},
		{"windows absolute path", ArchiveZip, makeZip(t, entry{name: `C:\x.txt`, body: "x"}), nil, 400, "absolute path"},
		{"tar symlink", ArchiveTarGz, makeTarGz(t, entry{name: "link", tarType: tar.TypeSymlink}), nil, 400, "not a regular file"},
		{"tar hard link", ArchiveTarGz, makeTarGz(t, entry{name: "link", tarType: tar.TypeLink}), nil, 400, "not a regular file"},
		{"tar device", ArchiveTarGz, makeTarGz(t, entry{name: "dev", tarType: tar.TypeChar}), nil, 400, "not a regular file"},
		{"zip symlink", ArchiveZip, makeZip(t, entry{name: "link", body: "/etc/passwd", mode: fs.ModeSymlink}), nil, 400, "not a regular file"},
		{"too many files", ArchiveZip, makeZip(t, entry{name: "1", body: "1"}, entry{name: "2", body: "2"}, entry{name: "3", body: "3"}, entry{name: "4", body: "4"}), nil, 413, "Too many files"},
		{"zip bomb", ArchiveZip, makeZip(t, entry{name: "bomb.txt", body: strings.Repeat("0", 5000)}), nil, 413, "too large when unpacked"},
		{"tar.gz bomb", ArchiveTarGz, makeTarGz(t, entry{name: "a", body: strings.Repeat("0", 600)}, entry{name: "b", body: strings.Repeat("0", 600)}), nil, 413, "too large when unpacked"},
		{"tar of empty folders (a CPU bomb)", ArchiveTarGz, makeTarGz(t, dirs(50)...), nil, 413, "Too many archive entries"},
		{"zip of empty folders", ArchiveZip, makeZip(t, dirs(50)...), nil, 413, "Too many archive entries"},
		{"macOS junk skipped, folder stripped", ArchiveZip, makeZip(t, entry{name: "site/index.html", body: "i"}, entry{name: "__MACOSX/site/._index.html", body: "junk"}, entry{name: "site/.DS_Store", body: "junk"}),
			map[string]string{"index.html": "i"}, 0, ""},
		{"absolute after stripping", ArchiveTarGz, makeTarGz(t, entry{name: "site//etc/passwd", body: "x"}), nil, 400, "absolute path"},
		{"backslash traversal", ArchiveZip, makeZip(t, entry{name: `a\..\..\x`, body: "x"}), nil, 400, "leaves the archive"},
		{"a root file keeps the folder", ArchiveZip, makeZip(t, entry{name: "index.html", body: "i"}, entry{name: "site/a.css", body: "a"}),
			map[string]string{"index.html": "i", "site/a.css": "a"}, 0, ""},
		{"empty", ArchiveZip, makeZip(t, entry{name: "dir/"}), nil, 400, "no files"},
		{"not a zip", ArchiveZip, []byte("hello"), nil, 400, "not a valid zip"},
		{"not gzip", ArchiveTarGz, []byte("hello"), nil, 400, "not a valid gzip"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ReadArchive(c.data, c.format, lim)
			if c.status != 0 {
				ae, ok := err.(*ArchiveError)
				if !ok || ae.Status != c.status || !strings.Contains(ae.Msg, c.errPart) {
					t.Fatalf("error %v, want %d with %q", err, c.status, c.errPart)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			m := map[string]string{}
			for _, f := range got {
				m[f.Path] = string(f.Data)
			}
			if len(m) != len(c.want) {
				t.Fatalf("entries %v, want %v", m, c.want)
			}
			for p, body := range c.want {
				if m[p] != body {
					t.Errorf("%s = %q, want %q (all: %v)", p, m[p], body, m)
				}
			}
		})
	}
}

// dirs is n folder entries of a tar.
func dirs(n int) []entry {
	out := make([]entry, n)
	for i := range out {
		out[i] = entry{name: "d" + strings.Repeat("x", i) + "/", tarType: tar.TypeDir}
	}
	return out
}

// TestArchiveEntryMemoryGrowsWithItsBytes: an entry's memory is reserved as
// its bytes are inflated, not when its header announces them, so a small
// archive that declares a large entry and then trickles holds little of
// the deploy memory budget.
func TestArchiveEntryMemoryGrowsWithItsBytes(t *testing.T) {
	var tarBuf bytes.Buffer
	tw := tar.NewWriter(&tarBuf)
	if err := tw.WriteHeader(&tar.Header{Name: "big.bin", Mode: 0o644, Size: 100 << 20, Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	tw.Write(make([]byte, 10)) // the rest never comes
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(tarBuf.Bytes())
	zw.Flush() // no trailer: the stream just stops, as a trickle would
	var reserved int64
	_, err := ReadArchiveFrom(bytes.NewReader(gz.Bytes()), ArchiveTarGz, ArchiveLimits{
		MaxFiles: 10, MaxBytes: 200 << 20,
		Reserve: func(n int64) error { reserved += n; return nil },
	})
	if err == nil {
		t.Fatal("a truncated archive was accepted")
	}
	if reserved > 2<<20 {
		t.Errorf("reserved %s for an entry of which 10 bytes came", FormatBytes(reserved))
	}
}

// TestArchiveLongNamesRefused: a tar entry name far longer than any valid
// path is refused when its header is read, not kept until the whole
// archive is unpacked.
func TestArchiveLongNamesRefused(t *testing.T) {
	var tarBuf bytes.Buffer
	tw := tar.NewWriter(&tarBuf)
	for i := range 3 {
		name := fmt.Sprintf("%d/%s", i, strings.Repeat("n", 64<<10))
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: 1, Typeflag: tar.TypeReg, Format: tar.FormatPAX}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte("x"))
	}
	tw.Close()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(tarBuf.Bytes())
	zw.Close()
	entries, err := ReadArchive(gz.Bytes(), ArchiveTarGz, ArchiveLimits{MaxFiles: 10, MaxBytes: 1 << 20})
	var ae *ArchiveError
	if !errors.As(err, &ae) || ae.Status != 400 || !strings.Contains(ae.Msg, "too long") || len(ae.Msg) > 300 {
		t.Fatalf("got %d entries, error %v; want a short 400 naming the long entry", len(entries), err)
	}
}
