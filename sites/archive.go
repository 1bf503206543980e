package sites

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"encoding/binary"
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
	// TooLarge, when set, is the message of the 413 that refuses an
	// archive over MaxBytes (an anonymous deploy's own cap, say); empty:
	// one that names MaxBytes.
	TooLarge string
	// Reserve, when set, is told of every piece of memory the archive
	// takes (the zip read whole, the entries' names and bytes, a copy
	// made to join pieces) before it is allocated (a memory budget): what
	// it is told covers what is allocated. Its error refuses the archive
	// and is returned as it is.
	Reserve func(n int64) error
	// Release, when set, is told of reserved memory the archive has
	// dropped: the pieces a copy was joined from, and a zip read whole
	// once it is unpacked.
	Release func(n int64)
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

// ReadArchive unpacks a zip or tar.gz archive held in memory; see
// ReadArchiveFrom.
func ReadArchive(data []byte, format string, lim ArchiveLimits) ([]FileInput, error) {
	return readArchive(bytes.NewReader(data), data, format, lim)
}

// ReadArchiveFrom unpacks a zip or tar.gz archive read from r into file
// entries, in memory and before anything is stored. Absolute paths, ".."
// (zip slip), links, devices and other special entries are refused, as are
// archives over the limits. When every entry lies in one top-level folder
// (site/index.html, site/css/a.css), that folder is stripped. The entries
// are then validated like JSON ones (DecodeFiles).
//
// The limits are checked before bytes are inflated, so that a refused
// bomb costs little: a zip's sizes in its central directory (archive/zip
// refuses an entry's data past its declared size), a tar entry's size in
// its header. A tar.gz is unpacked as r is read; a zip, which is read from
// its end, is read whole first (r is bounded by the caller). An entry's
// memory grows with its bytes as they come, so one that declares much and
// trickles holds little. An error of r itself is returned as it is.
func ReadArchiveFrom(r io.Reader, format string, lim ArchiveLimits) ([]FileInput, error) {
	return readArchive(r, nil, format, lim)
}

// readArchive is ReadArchiveFrom; data, when not nil, is r's bytes.
func readArchive(r io.Reader, data []byte, format string, lim ArchiveLimits) ([]FileInput, error) {
	u := &unpacker{lim: lim, maxHeaders: 2*lim.MaxFiles + 16}
	src := &sourceReader{r: r}
	var err error
	switch format {
	case ArchiveZip:
		var rerr error
		var held int64 // what the zip read whole holds, dropped once unpacked
		if data == nil {
			data, held, err = readPieces(src, -1, u.reserveInto(&rerr), u.release)
		}
		switch {
		case rerr != nil:
			err = rerr // the memory budget's
		case err == nil:
			err = u.zip(data)
		default:
			err = badArchive("reading the archive: %v", err)
		}
		u.release(held)
	case ArchiveTarGz:
		err = u.tarGz(src)
	default:
		err = badArchive("unknown archive format %q", format)
	}
	if src.err != nil {
		return nil, src.err // the body failed (too slow, too large), not the archive
	}
	if err != nil {
		return nil, err
	}
	if len(u.entries) == 0 {
		return nil, badArchive("the archive has no files")
	}
	stripCommonFolder(u.entries)
	for _, e := range u.entries { // what stripping left must still be safe
		if err := checkArchivePath(e.Path); err != nil {
			return nil, err
		}
	}
	return u.entries, nil
}

// unpacker gathers an archive's entries within its limits.
type unpacker struct {
	lim     ArchiveLimits
	entries []FileInput
	total   int64
	// headers counts every entry, folders and metadata included, so that
	// an archive of empty entries cannot keep a deploy busy.
	headers, maxHeaders int
}

func (u *unpacker) tooManyEntries() error {
	return &ArchiveError{Status: 413, Msg: fmt.Sprintf("Too many archive entries: the limit is %d files", u.lim.MaxFiles)}
}

func (u *unpacker) tooLarge() error {
	if u.lim.TooLarge != "" {
		return &ArchiveError{Status: 413, Msg: u.lim.TooLarge}
	}
	return &ArchiveError{Status: 413, Msg: fmt.Sprintf("Archive too large when unpacked: the limit is %s", FormatBytes(u.lim.MaxBytes))}
}

// maxArchiveNameLen bounds an entry's name: a valid path once one top
// folder is stripped fits in twice maxFilePathLen.
const maxArchiveNameLen = 2 * maxFilePathLen

// firstPiece is the first piece readPieces reads into.
const firstPiece = 16 << 10

// entryChunk is the most of an entry reserved and allocated at a time
// as its bytes are inflated.
const entryChunk = 1 << 20

// admit checks a regular file entry of the given (declared) size against
// the limits, and reserves its name, before any of its bytes is read.
func (u *unpacker) admit(name string, size int64) error {
	if len(u.entries) >= u.lim.MaxFiles {
		return &ArchiveError{Status: 413, Msg: fmt.Sprintf("Too many files: the limit is %d", u.lim.MaxFiles)}
	}
	if len(name) > maxArchiveNameLen {
		return badArchive("archive entry %q... has a name too long: at most %d bytes", name[:64], maxFilePathLen)
	}
	if err := checkArchivePath(name); err != nil {
		return err
	}
	if size < 0 || size > u.lim.MaxBytes-u.total {
		return u.tooLarge()
	}
	u.total += size
	return u.reserve(int64(len(name)))
}

// reserve tells the limits' Reserve of n bytes about to be allocated.
func (u *unpacker) reserve(n int64) error {
	if u.lim.Reserve == nil {
		return nil
	}
	return u.lim.Reserve(n)
}

// release tells the limits' Release of n reserved bytes dropped.
func (u *unpacker) release(n int64) {
	if u.lim.Release != nil && n > 0 {
		u.lim.Release(n)
	}
}

// reserveInto is reserve, remembering its error in *err, so that the
// caller tells the budget's refusal from a read error.
func (u *unpacker) reserveInto(err *error) func(int64) error {
	return func(n int64) error {
		*err = u.reserve(n)
		return *err
	}
}

// add reads an admitted entry of exactly size bytes from r. A zip's
// entry (inMemory: inflated from the archive in memory, at the speed of
// the CPU) is reserved and allocated whole at once. A tar's comes as the
// client sends it: it is read in pieces, reserved as they come (see
// readPieces).
func (u *unpacker) add(name string, size int64, r io.Reader, inMemory bool) error {
	var b []byte
	var err error
	if inMemory {
		if err := u.reserve(size); err != nil {
			return err
		}
		b = make([]byte, size)
		_, err = io.ReadFull(r, b)
	} else {
		var rerr error
		b, _, err = readPieces(r, size, u.reserveInto(&rerr), u.release)
		if rerr != nil {
			return rerr // the memory budget's
		}
	}
	if err != nil {
		var le *ArchiveError
		if errors.As(err, &le) {
			return le // the tar stream's own bound
		}
		return badArchive("archive entry %q cannot be read: %v", name, err)
	}
	// nothing may follow the declared size (archive/zip checks it too)
	var one [1]byte
	if n, err := r.Read(one[:]); n > 0 || (err != nil && !errors.Is(err, io.EOF)) {
		if err == nil {
			err = zip.ErrFormat
		}
		return badArchive("archive entry %q cannot be read: %v", name, err)
	}
	u.entries = append(u.entries, FileInput{Path: name, Data: b})
	return nil
}

// readPieces reads size bytes from r (size < 0: up to its end) into one
// slice without growing anything by copying, which would leave garbage
// nothing reserved: the bytes are read into pieces of at most entryChunk,
// each reserved before it is allocated, as they come (so a stream that
// declares much and trickles holds little), then pieces that are more
// than one are joined into a slice of the exact length, reserved too,
// and the pieces then given to release. What is reserved covers what is
// allocated; held is what stays reserved for the slice returned. An error
// of reserve is returned as it is; io.ErrUnexpectedEOF when r ends before
// size bytes.
func readPieces(r io.Reader, size int64, reserve func(int64) error, release func(int64)) (data []byte, held int64, err error) {
	var pieces [][]byte
	var total, reserved int64
	for size < 0 || total < size {
		// pieces grow with what came (no copy): a small stream holds
		// little, a large one few pieces
		n := min(int64(entryChunk), max(firstPiece, total))
		if size >= 0 {
			n = min(n, size-total)
		}
		if err := reserve(n); err != nil {
			return nil, 0, err
		}
		reserved += n
		p := make([]byte, n)
		m, err := io.ReadFull(r, p)
		total += int64(m)
		if m > 0 {
			pieces = append(pieces, p[:m])
		}
		if err != nil {
			if size < 0 && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)) {
				break // the end of the stream
			}
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return nil, 0, err
		}
	}
	switch len(pieces) {
	case 0:
		return []byte{}, reserved, nil
	case 1:
		return pieces[0], reserved, nil
	}
	if err := reserve(total); err != nil {
		return nil, 0, err
	}
	out := make([]byte, 0, total)
	for _, p := range pieces {
		out = append(out, p...)
	}
	release(reserved) // the pieces
	return out, total, nil
}

func (u *unpacker) zip(data []byte) error {
	// archive/zip builds a File for every directory record it finds,
	// whatever the count the end record gives: count them first.
	if zipDirectoryRecords(data) > u.maxHeaders {
		return u.tooManyEntries()
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return badArchive("not a valid zip archive: %v", err)
	}
	if len(zr.File) > u.maxHeaders {
		return u.tooManyEntries()
	}
	var files []*zip.File
	var declared uint64
	for _, f := range zr.File {
		if archiveJunk(f.Name) {
			continue
		}
		mode := f.Mode()
		switch {
		case mode.IsDir():
			continue
		case !mode.IsRegular():
			return badArchive("archive entry %q is not a regular file (links and special files are refused)", f.Name)
		}
		// the whole directory is checked before anything is inflated
		declared += f.UncompressedSize64
		if f.UncompressedSize64 > uint64(u.lim.MaxBytes) || declared > uint64(u.lim.MaxBytes) {
			return u.tooLarge()
		}
		files = append(files, f)
	}
	for _, f := range files {
		if err := u.admit(f.Name, int64(f.UncompressedSize64)); err != nil {
			return err
		}
		rc, err := f.Open()
		if err != nil {
			return badArchive("archive entry %q cannot be read: %v", f.Name, err)
		}
		err = u.add(f.Name, int64(f.UncompressedSize64), rc, true)
		rc.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

func (u *unpacker) tarGz(src *sourceReader) error {
	gz, err := gzip.NewReader(src)
	if err != nil {
		return badArchive("not a valid gzip stream: %v", err)
	}
	// The tar stream itself is bounded: headers and padding of empty
	// entries unpack too.
	tr := tar.NewReader(&limitedStream{r: gz, left: u.lim.MaxBytes + int64(u.maxHeaders)*1024})
	for {
		h, err := tr.Next()
		var le *ArchiveError
		if errors.As(err, &le) {
			return le
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return badArchive("not a valid tar.gz archive: %v", err)
		}
		u.headers++
		if u.headers > u.maxHeaders {
			return u.tooManyEntries()
		}
		if archiveJunk(h.Name) {
			continue
		}
		switch h.Typeflag {
		case tar.TypeDir, tar.TypeXGlobalHeader:
			continue
		case tar.TypeReg:
		default:
			return badArchive("archive entry %q is not a regular file (links and special files are refused)", h.Name)
		}
		if err := u.admit(h.Name, h.Size); err != nil {
			return err
		}
		if err := u.add(h.Name, h.Size, tr, false); err != nil {
			return err
		}
	}
}

// zipDirectoryRecords bounds from above the central directory records
// that archive/zip would read from data: the record signatures from where
// the directory may start (as the end record places it; anywhere, for a
// zip64 archive or none found) to the end.
func zipDirectoryRecords(data []byte) int {
	const endLen = 22 // end of central directory record, without comment
	start := 0
	for i := len(data) - endLen; i >= 0 && i >= len(data)-endLen-65535; i-- {
		b := data[i:]
		if string(b[:4]) != "PK\x05\x06" || i+endLen+int(binary.LittleEndian.Uint16(b[20:])) > len(data) {
			continue
		}
		size := int64(binary.LittleEndian.Uint32(b[12:]))
		offset := int64(binary.LittleEndian.Uint32(b[16:]))
		if binary.LittleEndian.Uint16(b[10:]) == 0xffff || size == 0xffffffff || offset == 0xffffffff {
			break // zip64: count everything
		}
		// the directory starts at offset, or size bytes before the end
		// record when data is prefixed (a self-extracting archive)
		start = int(min(offset, max(int64(i)-size, 0)))
		start = min(start, len(data))
		break
	}
	return bytes.Count(data[start:], []byte("PK\x01\x02"))
}

// sourceReader remembers the first error of the archive's own source
// (other than its end), which then wins over what the decompressor
// made of it.
type sourceReader struct {
	r   io.Reader
	err error
}

func (s *sourceReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) && s.err == nil {
		s.err = err
	}
	return n, err
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
