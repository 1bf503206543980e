package store

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// syncFileSystem flushes the whole file system that holds dir (syncfs);
// whole reports that it did.
func syncFileSystem(dir string) (whole bool, err error) {
	d, err := os.Open(dir)
	if err != nil {
		return false, fmt.Errorf("open %s: %w", dir, err)
	}
	defer d.Close()
	if err := unix.Syncfs(int(d.Fd())); err != nil {
		return false, fmt.Errorf("syncfs %s: %w", dir, err)
	}
	return true, nil
}
