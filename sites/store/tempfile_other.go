//go:build !linux

package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// blobDir is a blob folder a batch writes into (by path on this system;
// see the Linux version, which holds it open).
type blobDir struct{ path string }

// openBlobDir checks that the folder at path is there.
func openBlobDir(path string) (*blobDir, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("open blob dir %s: %w", path, err)
	}
	return &blobDir{path: path}, nil
}

func (d *blobDir) close() {}

// writeTemp writes data to a new file of the folder named .tmp-<random>
// (which Walk sweeps once old) and returns its name; the file is closed,
// not synced.
func (d *blobDir) writeTemp(data []byte) (string, error) {
	tmp, err := os.CreateTemp(d.path, ".tmp-*")
	if err != nil {
		return "", fmt.Errorf("create temp blob: %w", err)
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("write temp blob %s: %w", tmp.Name(), err)
	}
	return filepath.Base(tmp.Name()), nil
}

// writeNew writes data to a new file of the folder called name: an error
// that is fs.ErrExist when the name is taken.
func (d *blobDir) writeNew(name string, data []byte) error {
	p := filepath.Join(d.path, name)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("create temp blob %s: %w", p, err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(p)
		return fmt.Errorf("write temp blob %s: %w", p, err)
	}
	return nil
}

// link gives the folder's file from the second name to; a file already
// called to is left as it is.
func (d *blobDir) link(from, to string) error {
	err := os.Link(filepath.Join(d.path, from), filepath.Join(d.path, to))
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return nil
}

// linkOpenFile cannot link an open file by its descriptor here: the
// caller links by path and checks what it linked.
func linkOpenFile(*os.File, string) (bool, error) { return false, nil }

// rename moves the folder's file from to its name to.
func (d *blobDir) rename(from, to string) error {
	return os.Rename(filepath.Join(d.path, from), filepath.Join(d.path, to))
}

// remove removes the folder's file name, if it can.
func (d *blobDir) remove(name string) { os.Remove(filepath.Join(d.path, name)) }
