//go:build !linux

package store

import (
	"fmt"
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

// rename moves the folder's file from to its name to (replacing a file
// called to: see the Linux version, which keeps it).
func (d *blobDir) rename(from, to string) error {
	return os.Rename(filepath.Join(d.path, from), filepath.Join(d.path, to))
}

// renameBlob is blobDir.rename for paths (Put).
func renameBlob(from, to string) error { return os.Rename(from, to) }

// remove removes the folder's file name, if it can.
func (d *blobDir) remove(name string) { os.Remove(filepath.Join(d.path, name)) }
