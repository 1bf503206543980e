package store

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// blobDir is a blob folder held open by a batch (an O_PATH descriptor):
// its files are created and renamed by names relative to it, so that the
// kernel does not walk the store's whole path again for each of a
// deploy's thousands of files (two walks a blob: its create and its
// rename). It speaks to the kernel directly: an os.File would add four
// fcntl and a failed epoll_ctl to each file (os makes every file it opens
// non-blocking for its poller, and a regular file refuses the poller),
// and os.Rename one Stat of the destination to each rename.
type blobDir struct {
	path string
	fd   int
}

// openBlobDir opens the folder at path.
func openBlobDir(path string) (*blobDir, error) {
	fd, err := retryEINTR2(func() (int, error) {
		return unix.Open(path, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return nil, fmt.Errorf("open blob dir %s: %w", path, err)
	}
	return &blobDir{path: path, fd: fd}, nil
}

// close lets the folder go.
func (d *blobDir) close() { unix.Close(d.fd) }

// writeTemp writes data to a new file of the folder named .tmp-<random>
// (which Walk sweeps once old) and returns its name; the file is closed,
// not synced.
func (d *blobDir) writeTemp(data []byte) (string, error) {
	for try := 0; ; try++ {
		name := ".tmp-" + strconv.FormatUint(rand.Uint64(), 36)
		err := d.writeNew(name, data)
		if errors.Is(err, fs.ErrExist) && try < 100 {
			continue
		}
		if err != nil {
			return "", err
		}
		return name, nil
	}
}

// writeNew writes data to a new file of the folder called name: an error
// that is fs.ErrExist when the name is taken. The file is closed, not
// synced.
func (d *blobDir) writeNew(name string, data []byte) error {
	fd, err := retryEINTR2(func() (int, error) {
		return unix.Openat(d.fd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o600)
	})
	if err != nil {
		return fmt.Errorf("create temp blob %s: %w", filepath.Join(d.path, name), err)
	}
	err = writeAll(fd, data)
	if cerr := unix.Close(fd); err == nil && cerr != nil {
		err = fmt.Errorf("close: %w", cerr)
	}
	if err != nil {
		unix.Unlinkat(d.fd, name, 0)
		return fmt.Errorf("write temp blob %s: %w", filepath.Join(d.path, name), err)
	}
	return nil
}

// link gives the folder's file from the second name to. A file already
// called to is left as it is: a blob's name holds the same bytes,
// whoever wrote them.
func (d *blobDir) link(from, to string) error {
	err := retryEINTR(func() error { return unix.Linkat(d.fd, from, d.fd, to, 0) })
	if err != nil && err != unix.EEXIST {
		return fmt.Errorf("link %s to %s in %s: %w", from, to, d.path, err)
	}
	return nil
}

// rename moves the folder's file from to its name to.
func (d *blobDir) rename(from, to string) error {
	if err := retryEINTR(func() error { return unix.Renameat(d.fd, from, d.fd, to) }); err != nil {
		return fmt.Errorf("rename %s to %s in %s: %w", from, to, d.path, err)
	}
	return nil
}

// remove removes the folder's file name, if it can.
func (d *blobDir) remove(name string) { unix.Unlinkat(d.fd, name, 0) }

// writeAll writes data to fd, whatever the kernel takes at a time.
func writeAll(fd int, data []byte) error {
	for len(data) > 0 {
		n, err := retryEINTR2(func() (int, error) { return unix.Write(fd, data) })
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("write: %w", unix.EIO)
		}
		data = data[n:]
	}
	return nil
}

func retryEINTR(f func() error) error {
	for {
		if err := f(); err != unix.EINTR {
			return err
		}
	}
}

func retryEINTR2(f func() (int, error)) (int, error) {
	for {
		if n, err := f(); err != unix.EINTR {
			return n, err
		}
	}
}

// linkOpenFile gives the open file f the name dst, whatever name f has
// now (through /proc/self/fd: link(2) by path would link whatever file
// holds the path by then). It reports false when /proc is not there to
// do it.
func linkOpenFile(f *os.File, dst string) (bool, error) {
	src := "/proc/self/fd/" + strconv.Itoa(int(f.Fd()))
	err := retryEINTR(func() error { return unix.Linkat(unix.AT_FDCWD, src, unix.AT_FDCWD, dst, unix.AT_SYMLINK_FOLLOW) })
	if err == unix.ENOENT {
		if _, serr := os.Stat("/proc/self/fd"); serr != nil {
			return false, nil
		}
	}
	if err != nil {
		return true, &os.LinkError{Op: "link", Old: src, New: dst, Err: err}
	}
	return true, nil
}
