package store

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"

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
		fd, err := retryEINTR2(func() (int, error) {
			return unix.Openat(d.fd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o600)
		})
		if err == unix.EEXIST && try < 100 {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("create temp blob in %s: %w", d.path, err)
		}
		err = writeAll(fd, data)
		if cerr := unix.Close(fd); err == nil && cerr != nil {
			err = fmt.Errorf("close: %w", cerr)
		}
		if err != nil {
			unix.Unlinkat(d.fd, name, 0)
			return "", fmt.Errorf("write temp blob %s: %w", filepath.Join(d.path, name), err)
		}
		return name, nil
	}
}

// rename moves the folder's file from to its name to (renameKeeping).
func (d *blobDir) rename(from, to string) error {
	if err := renameKeeping(d.fd, from, to); err != nil {
		return fmt.Errorf("rename %s to %s in %s: %w", from, to, d.path, err)
	}
	return nil
}

// renameBlob is blobDir.rename for paths (Put).
func renameBlob(from, to string) error {
	if err := renameKeeping(unix.AT_FDCWD, from, to); err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	return nil
}

// renameKeeping moves the file from to the name to, both in the folder
// dirfd, unless a file is called to already: then from is removed and to
// is left as it is, its age refreshed (see keepExisting).
// RENAME_NOREPLACE, or a plain rename where the file system lacks it.
func renameKeeping(dirfd int, from, to string) error {
	err := retryEINTR(func() error { return unix.Renameat2(dirfd, from, dirfd, to, unix.RENAME_NOREPLACE) })
	switch err {
	case unix.EEXIST:
		unix.Unlinkat(dirfd, from, 0)
		return keepExisting(dirfd, to)
	case unix.EINVAL, unix.ENOSYS, unix.EOPNOTSUPP:
		return retryEINTR(func() error { return unix.Renameat(dirfd, from, dirfd, to) })
	}
	return err
}

// keepExisting leaves the blob file name (in the folder dirfd) as it is,
// where a write of the same blob found it: a blob's name holds the same
// bytes whoever wrote them, and replacing the file would free the one a
// committed version may name (on ext4 without a journal, a crash in the
// middle of that rename can leave the name pointing at the freed file).
// Its age is refreshed, as the new file's would have been, so that the
// collector's grace period counts from this write (never shortening a
// KeepUntil).
func keepExisting(dirfd int, name string) error {
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return fmt.Errorf("stat existing blob %s: %w", name, err)
	}
	now := time.Now()
	if time.Unix(st.Mtim.Unix()).After(now) {
		return nil
	}
	ts := []unix.Timespec{unix.NsecToTimespec(now.UnixNano()), unix.NsecToTimespec(now.UnixNano())}
	if err := unix.UtimesNanoAt(dirfd, name, ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return fmt.Errorf("touch existing blob %s: %w", name, err)
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
