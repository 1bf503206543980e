// Package store keeps site content addressed by the SHA-256 of its bytes:
// the BlobStore interface and its local implementation, FSStore (files
// written durably, batch writes flushed with one syncfs). The deploy
// service and the site server use it through BlobStore, so another
// backend (S3) can stand behind it.
package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"
)

// ErrBlobNotFound is returned by BlobStore.Open for a hash the store lacks.
var ErrBlobNotFound = errors.New("blob not found")

// BlobStore keeps site content addressed by the lowercase hex SHA-256 of its
// bytes. Every implementation must make Put durable before it returns, so a
// version that names a blob is only committed after the blob is safe.
//
// The local implementation is FSStore; an S3 backend can follow behind the
// same interface.
type BlobStore interface {
	// Has reports whether the blob is stored. A hit also refreshes the
	// blob's age, so that the collector's grace period protects a blob a
	// deploy is about to reference again.
	Has(ctx context.Context, hash string) (bool, error)
	// Put stores data under hash after checking that hash is its SHA-256.
	Put(ctx context.Context, hash string, data []byte) error
	// Open returns the blob for reading and seeking.
	Open(ctx context.Context, hash string) (Blob, error)
	// Delete removes a blob; deleting a missing blob is not an error.
	Delete(ctx context.Context, hash string) error
	// Walk calls fn for every stored blob with its last write time.
	Walk(ctx context.Context, fn func(hash string, modTime time.Time) error) error
}

// ErrorCounter counts a store's failed operations (hooks/server/metrics):
// backend names the store ("file", "s3"), op the operation. An answer
// that is no failure (a missing blob, an unmodified object, a condition
// not met) is not counted. It must be safe for concurrent use.
type ErrorCounter interface {
	StoreError(backend, op string)
}

// Blob is an open stored blob.
type Blob interface {
	io.ReadSeekCloser
	// Size is the blob's length in bytes.
	Size() int64
	// ModTime is when the blob was last written.
	ModTime() time.Time
}

// FileBlob is a Blob that is an open file of the local file system
// (FSStore's): a server hands the file to the kernel (sendfile) instead
// of copying its bytes. A remote store's blobs are not.
type FileBlob interface {
	Blob
	// OSFile is the open file itself: net's sendfile takes an
	// *os.File, not a type that embeds one.
	OSFile() *os.File
}

// HashBytes returns the lowercase hex SHA-256 of b, the key of b in a BlobStore.
func HashBytes(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// ParseHash reads a client's sha256: any case, answered in lower case;
// ok tells whether it is 64 hex digits.
func ParseHash(s string) (h string, ok bool) {
	h = strings.ToLower(s)
	return h, ValidHash(h)
}

// InvalidHashMsg says what is wrong with a sha256 that ParseHash refused.
func InvalidHashMsg(s string) string {
	return fmt.Sprintf("invalid sha256 %q (64 hex digits)", s)
}

// ValidHash reports whether h is a lowercase hex SHA-256.
func ValidHash(h string) bool {
	if len(h) != sha256.Size*2 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// FSStore is a BlobStore on the local file system: blob <hash> lives at
// <root>/<hash[:2]>/<hash>. Writes go to a temporary file in the same folder,
// are fsynced and renamed into place, and the folder is fsynced, so a crash
// never leaves a partial blob under a real name.
type FSStore struct {
	root string
	// flushes shares PutBatch's flushes of the file system between
	// concurrent batches.
	flushes *groupSync
	// dirsMade marks the 256 folders PutBatch made or found (makeDir).
	dirsMade [256]atomic.Bool
	// deletions counts Delete's calls (Deletions).
	deletions atomic.Uint64
	// errs counts failed operations (CountErrors); nil: not counted.
	errs atomic.Pointer[ErrorCounter]
}

// CountErrors has every failed write, read or delete of the store
// counted by c (backend "file"); a missing blob is no failure.
func (s *FSStore) CountErrors(c ErrorCounter) { s.errs.Store(&c) }

// counted counts err, when not nil, as a failure of op, and returns it.
func (s *FSStore) counted(op string, err error) error {
	if err != nil {
		if c := s.errs.Load(); c != nil {
			(*c).StoreError("file", op)
		}
	}
	return err
}

// NewFSStore returns an FSStore rooted at dir, creating the folder.
func NewFSStore(dir string) (*FSStore, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create blob dir: %w", err)
	}
	return &FSStore{root: dir, flushes: newGroupSync(syncFileSystem)}, nil
}

// MakeBlobDirs makes the blob folders (00 to ff) the root lacks, and
// marks all 256 made (makeDir); the root is fsynced when any was made.
// The server calls it as it starts, so that no deploy makes a folder: a
// new store's first deploys made about three each (a mkdir costs
// 30–120 µs on ext4, and the deploy's flushes wrote them out). It takes
// a new store some milliseconds, one ReadDir after that.
func (s *FSStore) MakeBlobDirs() error {
	entries, err := os.ReadDir(s.root)
	if err != nil {
		return fmt.Errorf("read blob dir: %w", err)
	}
	for _, e := range entries {
		if n := e.Name(); len(n) == 2 && e.IsDir() && isLowerHex(n[0]) && isLowerHex(n[1]) {
			s.dirsMade[dirIndex(n)].Store(true)
		}
	}
	made := false
	for i := range s.dirsMade {
		if s.dirsMade[i].Load() {
			continue
		}
		name := fmt.Sprintf("%02x", i)
		if err := os.Mkdir(filepath.Join(s.root, name), 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("create blob dir %s: %w", name, err)
		}
		s.dirsMade[i].Store(true)
		made = true
	}
	if made {
		return syncDir(s.root)
	}
	return nil
}

// Root is the folder that holds the blobs.
func (s *FSStore) Root() string { return s.root }

func (s *FSStore) path(hash string) (string, error) {
	if !ValidHash(hash) {
		return "", fmt.Errorf("invalid blob hash %q", hash)
	}
	return filepath.Join(s.root, hash[:2], hash), nil
}

// Has implements BlobStore.
func (s *FSStore) Has(_ context.Context, hash string) (bool, error) {
	p, st, err := s.stat(hash)
	if st == nil || err != nil {
		return false, err
	}
	// Refresh the age, but never shorten a KeepUntil.
	if now := time.Now(); st.ModTime().Before(now) {
		if err := os.Chtimes(p, now, now); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return false, nil
			}
			return false, fmt.Errorf("touch blob %s: %w", hash, err)
		}
	}
	return true, nil
}

// Exists reports whether the store has a blob, without refreshing its
// age: asking must not keep unreferenced content alive.
func (s *FSStore) Exists(_ context.Context, hash string) (bool, error) {
	_, st, err := s.stat(hash)
	return st != nil, err
}

// stat returns the path of a blob and its file info, nil when there is
// no such blob.
func (s *FSStore) stat(hash string) (string, fs.FileInfo, error) {
	p, err := s.path(hash)
	if err != nil {
		return "", nil, err
	}
	st, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return p, nil, nil
	}
	if err != nil {
		return p, nil, fmt.Errorf("stat blob %s: %w", hash, err)
	}
	return p, st, nil
}

// Put implements BlobStore.
func (s *FSStore) Put(_ context.Context, hash string, data []byte) (err error) {
	defer func() { s.counted("put", err) }()
	p, err := s.path(hash)
	if err != nil {
		return err
	}
	if got := HashBytes(data); got != hash {
		return fmt.Errorf("blob hash mismatch: want %s, got %s", hash, got)
	}
	dir := filepath.Dir(p)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create blob dir: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return fmt.Errorf("create temp blob: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return fmt.Errorf("write blob %s: %w", hash, err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("sync blob %s: %w", hash, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("close blob %s: %w", hash, err)
	}
	if err = renameBlob(tmp.Name(), p); err != nil {
		return fmt.Errorf("rename blob %s: %w", hash, err)
	}
	return syncDir(dir)
}

// Open implements BlobStore.
func (s *FSStore) Open(_ context.Context, hash string) (Blob, error) {
	p, err := s.path(hash)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, ErrBlobNotFound
		}
		return nil, s.counted("open", fmt.Errorf("open blob %s: %w", hash, err))
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, s.counted("open", fmt.Errorf("stat blob %s: %w", hash, err))
	}
	return &fileBlob{File: f, size: st.Size(), mod: st.ModTime()}, nil
}

// Delete implements BlobStore.
func (s *FSStore) Delete(_ context.Context, hash string) error {
	p, err := s.path(hash)
	if err != nil {
		return err
	}
	err = os.Remove(p)
	s.deletions.Add(1) // after the blob is gone: see Deletions
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return s.counted("delete", fmt.Errorf("delete blob %s: %w", hash, err))
	}
	return nil
}

// Deletions counts the calls to Delete so far, each counted once its
// blob is gone: a caller that read the count, then found blobs present,
// knows they are all still there while the count has not moved (no
// blob leaves the store but by Delete, the collector's included).
func (s *FSStore) Deletions() uint64 { return s.deletions.Load() }

// Walk implements BlobStore. Temporary files older than an hour, left by a
// crash mid-write, are removed on the way.
func (s *FSStore) Walk(ctx context.Context, fn func(hash string, modTime time.Time) error) error {
	return filepath.WalkDir(s.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		name := d.Name()
		if !ValidHash(name) {
			if len(name) > 5 && name[:5] == ".tmp-" && time.Since(info.ModTime()) > time.Hour {
				os.Remove(p)
			}
			return nil
		}
		return fn(name, info.ModTime())
	})
}

type fileBlob struct {
	*os.File
	size int64
	mod  time.Time
}

// OSFile implements FileBlob.
func (b *fileBlob) OSFile() *os.File { return b.File }

var _ FileBlob = (*fileBlob)(nil)

func (b *fileBlob) Size() int64        { return b.size }
func (b *fileBlob) ModTime() time.Time { return b.mod }

// syncDir fsyncs a folder so a rename inside it survives a crash.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open dir for sync: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync dir %s: %w", dir, err)
	}
	return nil
}

// isLowerHex reports whether c is a digit of a blob hash.
func isLowerHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' }

// KeepUntil sets a blob's age so that the collector, which removes
// unreferenced blobs older than its grace, spares it until about t: an
// upload waiting for the deploy that will reference it.
func (s *FSStore) KeepUntil(_ context.Context, hash string, t time.Time) error {
	p, err := s.path(hash)
	if err != nil {
		return err
	}
	if err := os.Chtimes(p, t, t); err != nil {
		return fmt.Errorf("keep blob %s: %w", hash, err)
	}
	return nil
}
