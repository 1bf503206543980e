package sites

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"errors"
	"hash/crc32"
	"io"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// bombSize is what the bombs unpack to: far over any limit.
const bombSize = 1 << 30

// zeros is an endless reader of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// bombs are built once: compressing a GiB takes a moment.
var bombs = sync.OnceValues(func() (map[string][]byte, error) {
	out := map[string][]byte{}
	// deflated zeros, reused by both zips
	var raw bytes.Buffer
	fw, err := flate.NewWriter(&raw, flate.BestSpeed)
	if err != nil {
		return nil, err
	}
	if _, err := io.CopyN(fw, zeros{}, bombSize); err != nil {
		return nil, err
	}
	fw.Close()
	crc := crc32.NewIEEE()
	if _, err := io.CopyN(crc, zeros{}, bombSize); err != nil {
		return nil, err
	}
	mkZip := func(declared uint64) []byte {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		w, _ := zw.CreateRaw(&zip.FileHeader{Name: "zeros.txt", Method: zip.Deflate,
			CompressedSize64: uint64(raw.Len()), UncompressedSize64: declared, CRC32: crc.Sum32()})
		w.Write(raw.Bytes())
		zw.Close()
		return buf.Bytes()
	}
	out["zip"] = mkZip(bombSize)
	out["zip, lying size"] = mkZip(100) // says 100 bytes, holds a GiB
	var tgz bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&tgz, gzip.BestSpeed)
	tw := tar.NewWriter(gz)
	tw.WriteHeader(&tar.Header{Name: "zeros.txt", Mode: 0o644, Typeflag: tar.TypeReg, Size: bombSize})
	io.CopyN(tw, zeros{}, bombSize)
	tw.Close()
	gz.Close()
	out["tar.gz"] = tgz.Bytes()
	return out, nil
})

// TestArchiveBombsCostLittle: refusing a GiB of zeros allocates a small
// fraction of the limit, not the limit (sizes are checked before bytes are
// inflated).
func TestArchiveBombsCostLittle(t *testing.T) {
	if testing.Short() {
		t.Skip("compresses a GiB")
	}
	all, err := bombs()
	if err != nil {
		t.Fatal(err)
	}
	lim := ArchiveLimits{MaxFiles: 1000, MaxBytes: 200 << 20}
	for _, c := range []struct {
		name, format string
		status       int
		errPart      string
	}{
		{"zip", ArchiveZip, 413, "too large when unpacked"},
		{"zip, lying size", ArchiveZip, 400, "cannot be read"},
		{"tar.gz", ArchiveTarGz, 413, "too large when unpacked"},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := all[c.name]
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := ReadArchiveFrom(bytes.NewReader(data), c.format, lim)
			runtime.ReadMemStats(&after)
			var ae *ArchiveError
			if !errors.As(err, &ae) || ae.Status != c.status || !strings.Contains(ae.Msg, c.errPart) {
				t.Fatalf("error %v, want %d with %q", err, c.status, c.errPart)
			}
			if got := after.TotalAlloc - before.TotalAlloc; got > 16<<20 {
				t.Errorf("refusing the bomb allocated %d MiB", got>>20)
			}
		})
	}
}

// TestZipDirectoryBombCostsLittle: a zip of a great many empty entries is
// refused from its end record, before archive/zip builds a File for each.
func TestZipDirectoryBombCostsLittle(t *testing.T) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := range 200_000 {
		if _, err := zw.CreateHeader(&zip.FileHeader{Name: strconv.Itoa(i), Method: zip.Store}); err != nil {
			t.Fatal(err)
		}
	}
	zw.Close()
	data := buf.Bytes()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := ReadArchive(data, ArchiveZip, ArchiveLimits{MaxFiles: 1000, MaxBytes: 200 << 20})
	runtime.ReadMemStats(&after)
	var ae *ArchiveError
	if !errors.As(err, &ae) || ae.Status != 413 || !strings.Contains(ae.Msg, "Too many archive entries") {
		t.Fatalf("error %v, want 413 Too many archive entries", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 4<<20 {
		t.Errorf("refusing %d MiB of entries allocated %d MiB", len(data)>>20, got>>20)
	}
}
