package sites

import (
	"archive/tar"
	"bytes"
	"errors"
	"io/fs"
	"strings"
	"testing"
)

// FuzzReadArchive: whatever the bytes, ReadArchive does not panic, stays
// within its limits, answers an *ArchiveError when it refuses, and returns
// only safe relative paths.
func FuzzReadArchive(f *testing.F) {
	lying := makeZip(f, entry{name: "a.txt", body: strings.Repeat("0", 4000)})
	// the central directory says 10 bytes for 4000 (the local header is
	// left alone: archive/zip reads sizes from the directory)
	if i := bytes.LastIndex(lying, []byte("PK\x01\x02")); i >= 0 {
		copy(lying[i+24:], []byte{10, 0, 0, 0})
	}
	seeds := [][]byte{
		makeZip(f, entry{name: "site/index.html", body: "<p>hi</p>"}, entry{name: "site/a.css", body: "a{}"}),
		makeTarGz(f, entry{name: "./dist/index.html", body: "home"}, entry{name: "./dist/app.js", body: "js"}),
		makeZip(f, entry{name: "../x", body: "x"}),
		makeTarGz(f, entry{name: "../x", body: "x"}),
		makeTarGz(f, entry{name: "/etc/passwd", body: "x"}),
		makeZip(f, entry{name: "/etc/passwd", body: "x"}),
		makeTarGz(f, entry{name: "link", tarType: tar.TypeSymlink}),
		makeZip(f, entry{name: "link", body: "/etc/passwd", mode: fs.ModeSymlink}),
		lying,
		makeZip(f, entry{name: "bomb", body: strings.Repeat("0", 5000)}),
		makeTarGz(f, entry{name: "bomb", body: strings.Repeat("0", 5000)}),
	}
	valid := seeds[0]
	seeds = append(seeds, valid[:len(valid)/2], seeds[1][:len(seeds[1])/2], []byte("PK\x05\x06"), []byte{0x1f, 0x8b})
	for _, s := range seeds {
		f.Add(s, true)
		f.Add(s, false)
	}
	lim := ArchiveLimits{MaxFiles: 5, MaxBytes: 2000}
	f.Fuzz(func(t *testing.T, data []byte, isZip bool) {
		format := ArchiveTarGz
		if isZip {
			format = ArchiveZip
		}
		var reserved int64
		l := lim
		l.Reserve = func(n int64) error { reserved += n; return nil }
		got, err := ReadArchive(data, format, l)
		if reserved > lim.MaxBytes {
			t.Fatalf("reserved %d bytes, limit %d", reserved, lim.MaxBytes)
		}
		if err != nil {
			var ae *ArchiveError
			if !errors.As(err, &ae) || (ae.Status != 400 && ae.Status != 413) {
				t.Fatalf("error %T %v is not a 400 or 413 ArchiveError", err, err)
			}
			return
		}
		if len(got) == 0 || len(got) > lim.MaxFiles {
			t.Fatalf("%d entries, limit %d", len(got), lim.MaxFiles)
		}
		var total int64
		for _, e := range got {
			total += int64(len(e.Data))
			if err := checkArchivePath(e.Path); err != nil {
				t.Fatalf("unsafe path returned: %v", err)
			}
		}
		if total > lim.MaxBytes || total > reserved {
			t.Fatalf("%d bytes returned, limit %d, reserved %d", total, lim.MaxBytes, reserved)
		}
	})
}
