package sites

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Archive formats a deploy may upload instead of JSON.
const (
	ArchiveZip   = "zip"
	ArchiveTarGz = "tar.gz"
)

// ArchiveLimits bound what an archive may unpack to.
type ArchiveLimits struct {
	// MaxFiles is the most regular files (directories do not count).
	MaxFiles int
	// MaxBytes is the most uncompressed bytes in all, so that a small
	// archive cannot unpack to gigabytes.
	MaxBytes int64
}

// ArchiveError is a refused archive: Status is 400 (a malformed or unsafe
// entry) or 413 (over a limit).
type ArchiveError struct {
	Status int
	Msg    string
}

func (e *ArchiveError) Error() string { return e.Msg }

func badArchive(format string, args ...any) error {
	return &ArchiveError{Status: 400, Msg: fmt.Sprintf(format, args...)}
}

// ReadArchive unpacks a zip or tar.gz archive into file entries, entirely
// in memory and before anything is stored. Absolute paths, ".." (zip
// slip), links, devices and other special entries are refused, as are
// archives over the limits. When every entry lies in one top-level folder
// (site/index.html, site/css/a.css), that folder is stripped. The entries
// are then validated like JSON ones (DecodeFiles).
func ReadArchive(data []byte, format string, lim ArchiveLimits) ([]FileInput, error) {
	var entries []FileInput
	var total int64
	add := func(name string, r io.Reader) error {
		if len(entries) >= lim.MaxFiles {
			return &ArchiveError{Status: 413, Msg: fmt.Sprintf("Too many files: the limit is %d", lim.MaxFiles)}
		}
		if err := checkArchivePath(name); err != nil {
			return err
		}
		// Read at most what is left of the budget, whatever the header
		// claims: a bomb lies about sizes.
		left := lim.MaxBytes - total
		b, err := io.ReadAll(io.LimitReader(r, left+1))
		if err != nil {
			return badArchive("archive entry %q cannot be read: %v", name, err)
		}
		if int64(len(b)) > left {
			return &ArchiveError{Status: 413, Msg: fmt.Sprintf("Archive too large when unpacked: the limit is %s", FormatBytes(lim.MaxBytes))}
		}
		total += int64(len(b))
		entries = append(entries, FileInput{Path: name, Data: b})
		return nil
	}
	// headers counts every entry, folders and metadata included, so that
	// an archive of empty entries cannot keep a deploy busy.
	maxHeaders := 2*lim.MaxFiles + 16
	tooManyEntries := &ArchiveError{Status: 413, Msg: fmt.Sprintf("Too many archive entries: the limit is %d files", lim.MaxFiles)}
	headers := 0
	countHeader := func() error {
		headers++
		if headers > maxHeaders {
			return tooManyEntries
		}
		return nil
	}

	switch format {
	case ArchiveZip:
		zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return nil, badArchive("not a valid zip archive: %v", err)
		}
		if len(zr.File) > maxHeaders {
			return nil, tooManyEntries
		}
		for _, f := range zr.File {
			if archiveJunk(f.Name) {
				continue
			}
			mode := f.Mode()
			switch {
			case mode.IsDir():
				continue
			case !mode.IsRegular():
				return nil, badArchive("archive entry %q is not a regular file (links and special files are refused)", f.Name)
			}
			rc, err := f.Open()
			if err != nil {
				return nil, badArchive("archive entry %q cannot be read: %v", f.Name, err)
			}
			err = add(f.Name, rc)
			rc.Close()
			if err != nil {
				return nil, err
			}
		}
	case ArchiveTarGz:
		gz, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, badArchive("not a valid gzip stream: %v", err)
		}
		// The tar stream itself is bounded: headers and padding of empty
		// entries unpack too.
		tr := tar.NewReader(&limitedStream{r: gz, left: lim.MaxBytes + int64(maxHeaders)*1024})
		for {
			h, err := tr.Next()
			var le *ArchiveError
			if errors.As(err, &le) {
				return nil, le
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, badArchive("not a valid tar.gz archive: %v", err)
			}
			if err := countHeader(); err != nil {
				return nil, err
			}
			if archiveJunk(h.Name) {
				continue
			}
			switch h.Typeflag {
			case tar.TypeDir, tar.TypeXGlobalHeader:
				continue
			case tar.TypeReg:
			default:
				return nil, badArchive("archive entry %q is not a regular file (links and special files are refused)", h.Name)
			}
			if err := add(h.Name, tr); err != nil {
				return nil, err
			}
		}
	default:
		return nil, badArchive("unknown archive format %q", format)
	}
	if len(entries) == 0 {
		return nil, badArchive("the archive has no files")
	}
	stripCommonFolder(entries)
	for _, e := range entries { // what stripping left must still be safe
		if err := checkArchivePath(e.Path); err != nil {
			return nil, err
		}
	}
	return entries, nil
}

// archiveJunk tells entries that desktop archivers add and no site wants:
// macOS resource forks and Finder files, Windows thumbnails.
func archiveJunk(name string) bool {
	n := strings.ReplaceAll(name, "\\", "/")
	base := n[strings.LastIndexByte(n, '/')+1:]
	return strings.HasPrefix(n, "__MACOSX/") || strings.Contains(n, "/__MACOSX/") ||
		base == ".DS_Store" || strings.HasPrefix(base, "._") || base == "Thumbs.db"
}

// limitedStream reads at most left bytes, then fails with a 413.
type limitedStream struct {
	r    io.Reader
	left int64
}

func (l *limitedStream) Read(p []byte) (int, error) {
	if l.left <= 0 {
		return 0, &ArchiveError{Status: 413, Msg: "Archive too large when unpacked"}
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}

// checkArchivePath refuses entry names that would escape the site or are
// not relative paths.
func checkArchivePath(name string) error {
	n := strings.ReplaceAll(name, "\\", "/")
	if strings.HasPrefix(n, "/") || (len(n) > 1 && n[1] == ':') {
		return badArchive("archive entry %q has an absolute path", name)
	}
	for _, seg := range strings.Split(n, "/") {
		if seg == ".." {
			return badArchive("archive entry %q leaves the archive (..)", name)
		}
	}
	return nil
}

// stripCommonFolder removes a top-level folder that holds every entry.
func stripCommonFolder(entries []FileInput) {
	first, _, ok := strings.Cut(strings.TrimPrefix(entries[0].Path, "./"), "/")
	if !ok || first == "" {
		return
	}
	prefix := first + "/"
	for _, e := range entries {
		if !strings.HasPrefix(strings.TrimPrefix(e.Path, "./"), prefix) {
			return
		}
	}
	for i := range entries {
		entries[i].Path = strings.TrimPrefix(strings.TrimPrefix(entries[i].Path, "./"), prefix)
	}
}
