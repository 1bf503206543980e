package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// PutBatch stores many blobs durably with two flushes of the file system
// in all (shared with the batches that run at the same time: groupSync),
// instead of an fsync per file and per folder: every blob is
// written to a temporary file, the data is flushed, the files are renamed
// to their hashes, and the renames are flushed. A crash at any point
// leaves only whole blobs under hash names (and temporary files, which
// Walk removes once old). Where the file system cannot be flushed whole
// (not Linux), each file and folder is fsynced instead.
func (s *FSStore) PutBatch(ctx context.Context, blobs map[string][]byte) (err error) {
	type pending struct {
		dir        *blobDir
		tmp, final string // names in dir
	}
	written := make([]pending, 0, len(blobs))
	dirs := map[string]*blobDir{} // by path, the batch's current handles
	var opened []*blobDir         // every handle, closed at the end
	defer func() {
		if err != nil && ctx.Err() == nil {
			s.counted("put", err)
		}
	}()
	defer func() {
		if err != nil {
			for _, p := range written {
				p.dir.remove(p.tmp)
			}
		}
		for _, d := range opened {
			d.close()
		}
	}()
	// open gives the batch's handle of the blob folder path (of hash),
	// making the folder first when it is missing: made again, when
	// again is set (it was removed behind the store's back).
	open := func(hash, path string, again bool) (*blobDir, error) {
		if d := dirs[path]; d != nil && !again {
			return d, nil
		}
		if again {
			// (a handle of the removed folder stays open until the end:
			// files written through it may still be named by it)
			s.dirsMade[dirIndex(hash)].Store(false)
		}
		if err := s.makeDir(hash, path); err != nil {
			return nil, err
		}
		d, err := openBlobDir(path)
		if err != nil {
			return nil, err
		}
		dirs[path] = d
		opened = append(opened, d)
		return d, nil
	}
	for hash, data := range blobs {
		if err := ctx.Err(); err != nil {
			return err
		}
		final, err := s.path(hash)
		if err != nil {
			return err
		}
		if got := HashBytes(data); got != hash {
			return fmt.Errorf("blob hash mismatch: want %s, got %s", hash, got)
		}
		path := filepath.Dir(final)
		d, err := open(hash, path, false)
		var tmp string
		if err == nil {
			tmp, err = d.writeTemp(data)
		}
		if errors.Is(err, fs.ErrNotExist) {
			// the folder was removed behind the store's back: make it again
			if d, err = open(hash, path, true); err == nil {
				tmp, err = d.writeTemp(data)
			}
		}
		if err != nil {
			return fmt.Errorf("blob %s: %w", hash, err)
		}
		written = append(written, pending{d, tmp, filepath.Base(final)})
	}
	if len(written) == 0 {
		return nil
	}

	whole, err := s.flushes.sync(s.root)
	if err != nil {
		return fmt.Errorf("flush blobs: %w", err)
	}
	if !whole {
		for _, p := range written {
			if err := fsyncPath(filepath.Join(p.dir.path, p.tmp)); err != nil {
				return err
			}
		}
	}
	for i, p := range written {
		if err := p.dir.rename(p.tmp, p.final); err != nil {
			written = written[i:] // the rest are still temporary
			return fmt.Errorf("rename blob: %w", err)
		}
	}
	written = nil
	if whole {
		if _, err := s.flushes.sync(s.root); err != nil {
			return fmt.Errorf("flush blob names: %w", err)
		}
		return nil
	}
	for path := range dirs {
		if err := syncDir(path); err != nil {
			return err
		}
	}
	return nil
}

// fsyncPath fsyncs the file at p.
func fsyncPath(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("open blob for sync: %w", err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync blob: %w", err)
	}
	return nil
}

// makeDir makes dir, the folder of the blob hash, unless this store has
// made or found it before: the folders are never removed, so a deploy of
// a thousand files asks for them once per process, not once per batch.
func (s *FSStore) makeDir(hash, dir string) error {
	made := &s.dirsMade[dirIndex(hash)]
	if made.Load() {
		return nil
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		if err := os.MkdirAll(dir, 0o755); err != nil { // the root gone?
			return fmt.Errorf("create blob dir: %w", err)
		}
	}
	made.Store(true)
	return nil
}

// dirIndex is the number of a valid hash's folder (its first two hex
// digits).
func dirIndex(hash string) int {
	return hexDigit(hash[0])<<4 | hexDigit(hash[1])
}

func hexDigit(c byte) int {
	if c >= 'a' {
		return int(c-'a') + 10
	}
	return int(c - '0')
}
