package store

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// A small batch is made durable with one flush of the file system instead
// of two. Each blob is written under a temporary name that carries its
// hash (putPrefix + hash), the file system is flushed (the bytes and that
// name are now on disk), and the blob is linked to its hash. The link is
// not flushed before PutBatch returns: a crash may lose it, and leave the
// blob under its temporary name alone, whole and durable. Open finds it
// there (completePut), and Walk completes it once it is old. The
// temporary name is removed once a later flush (the next batch's, or
// Walk's) has made the link durable, and only while it is a second name
// of the blob's file (secondName.remove): until then it is that, no
// second copy. Every removal of a temporary hash name waits for a flush
// that started after the hash name was given, so that on disk the blob
// always has one of its two names.
//
// A link where a rename was keeps the blob named on disk at every
// moment, even where a rename is not atomic across a crash (ext4 without
// a journal): the temporary name is only removed after the link is
// durable.
//
// A flush costs about 0.35 ms on an idle ext4 disk; the linked name costs
// a link where a rename was, and later two lstat and an unlink a blob (a
// few µs each). A batch of more than oneFlushBlobs blobs flushes twice,
// as before: at 30 blobs its blobs' extra calls cost as much as the
// flush they save (bench/README.md).
const (
	oneFlushBlobs = 16
	putPrefix     = ".put-"
)

// secondName is a blob that PutBatch linked to its hash from its
// temporary hash name: the folder, and the hash name.
type secondName struct {
	dir, hash string
}

// remove removes the blob's temporary hash name if it is a second name
// of the file its hash names: never the only name of a blob, nor a file
// another batch has written under that name since (which has no hash
// name yet, or another file's). The caller has flushed the file system
// since the hash name was given.
func (n secondName) remove() {
	tmp := filepath.Join(n.dir, putPrefix+n.hash)
	a, err := os.Lstat(tmp)
	if err != nil {
		return
	}
	b, err := os.Lstat(filepath.Join(n.dir, n.hash))
	if err == nil && os.SameFile(a, b) {
		os.Remove(tmp)
	}
}

// secondNames holds the temporary names to remove once a later flush has
// made their links durable.
type secondNames struct {
	mu    sync.Mutex
	names []secondName
}

// add queues one name.
func (q *secondNames) add(n secondName) {
	q.mu.Lock()
	q.names = append(q.names, n)
	q.mu.Unlock()
}

// take returns every queued name and empties the queue: names whose links
// were made before the caller's next flush starts.
func (q *secondNames) take() []secondName {
	q.mu.Lock()
	defer q.mu.Unlock()
	names := q.names
	q.names = nil
	return names
}

// putBack queues names again (their flush failed).
func (q *secondNames) putBack(names []secondName) {
	if len(names) == 0 {
		return
	}
	q.mu.Lock()
	q.names = append(q.names, names...)
	q.mu.Unlock()
}

// removeSecondNames removes the temporary names of names, which a
// finished flush has made second names on disk (secondName.remove).
func removeSecondNames(names []secondName) {
	for _, n := range names {
		n.remove()
	}
}

// flushSecondNames flushes the file system when second names wait for it,
// and removes them (Walk: no batch may come to do it).
func (s *FSStore) flushSecondNames() error {
	names := s.linked.take()
	if len(names) == 0 {
		return nil
	}
	if _, err := s.flushes.sync(s.root); err != nil {
		s.linked.putBack(names)
		return fmt.Errorf("flush blob names: %w", err)
	}
	removeSecondNames(names)
	return nil
}

// completePut gives blob hash, missing at final, its name from the
// temporary one a crash left it under (see above), when that file holds
// the blob's bytes. The file system is flushed before the link, so that a
// file still being written by a batch is not named before its bytes are
// durable, and the file linked is the one whose bytes were checked (by
// its descriptor; where that cannot be done, the name is checked after
// the link). It reports whether the blob is now at final.
func (s *FSStore) completePut(hash, final string) (bool, error) {
	tmp := filepath.Join(filepath.Dir(final), putPrefix+hash)
	f, err := os.Open(tmp)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("open %s: %w", tmp, err)
	}
	defer f.Close()
	sum := sha256.New()
	if _, err := io.Copy(sum, f); err != nil {
		return false, fmt.Errorf("read %s: %w", tmp, err)
	}
	if hex.EncodeToString(sum.Sum(nil)) != hash {
		return false, nil // torn by a crash, or still being written
	}
	checked, err := f.Stat()
	if err != nil {
		return false, fmt.Errorf("stat %s: %w", tmp, err)
	}
	if _, err := s.flushes.sync(s.root); err != nil {
		return false, fmt.Errorf("flush blob %s: %w", hash, err)
	}
	done, err := linkOpenFile(f, final)
	if !done {
		err = os.Link(tmp, final)
		if err == nil {
			if got, serr := os.Lstat(final); serr != nil || !os.SameFile(got, checked) {
				return false, fmt.Errorf("complete blob %s: its temporary file changed while it was linked", hash)
			}
		}
	}
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return false, fmt.Errorf("complete blob %s: %w", hash, err)
	}
	return true, nil
}

// sweepPut judges a temporary hash name Walk found at p (name in its
// folder) once it is an hour old, when no batch still writes it: a blob
// that only has this name (a crash lost its hash name) gets its hash
// name, and this one goes at a later sweep; a file whose bytes are not
// its blob's, or a name with no hash, is removed; a name beside its
// blob's hash name is returned, for Walk to remove after a flush.
func (s *FSStore) sweepPut(p, name string, modTime time.Time) (later *secondName) {
	if time.Since(modTime) <= time.Hour {
		return nil
	}
	hash := name[len(putPrefix):]
	if !ValidHash(hash) {
		os.Remove(p)
		return nil
	}
	dir := filepath.Dir(p)
	if _, err := os.Lstat(filepath.Join(dir, hash)); err == nil {
		return &secondName{dir, hash}
	}
	if ok, err := s.completePut(hash, filepath.Join(dir, hash)); !ok && err == nil {
		os.Remove(p) // torn (completePut saw its bytes)
	}
	return nil
}

// removeSwept removes the temporary hash names sweepPut found beside
// their blobs' hash names, after a flush (a hash name given since the
// last flush must be durable first): a second name of the blob's file,
// or a stale copy of a blob written again under a new temporary name,
// still an hour old.
func (s *FSStore) removeSwept(names []secondName) error {
	if len(names) == 0 {
		return nil
	}
	if _, err := s.flushes.sync(s.root); err != nil {
		return fmt.Errorf("flush blob names: %w", err)
	}
	for _, n := range names {
		tmp := filepath.Join(n.dir, putPrefix+n.hash)
		a, err := os.Lstat(tmp)
		if err != nil {
			continue
		}
		b, err := os.Lstat(filepath.Join(n.dir, n.hash))
		if err == nil && (os.SameFile(a, b) || time.Since(a.ModTime()) > time.Hour) {
			os.Remove(tmp)
		}
	}
	return nil
}

// removeSecondNameOf removes the temporary hash name of blob hash at
// final when it is a second name of that file (Delete: the blob would
// come back through it).
func removeSecondNameOf(hash, final string) {
	secondName{filepath.Dir(final), hash}.remove()
}
