//go:build !linux

package store

import (
	"fmt"
	"os"
)

// writeTemp writes data to a new file of dir named .tmp-<random> (which
// Walk sweeps once old) and returns its path; the file is closed, not
// synced.
func writeTemp(dir string, data []byte) (string, error) {
	tmp, err := os.CreateTemp(dir, ".tmp-*")
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
	return tmp.Name(), nil
}

// rename moves a temporary blob to its name.
func rename(from, to string) error { return os.Rename(from, to) }
