package store

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// writeTemp writes data to a new file of dir named .tmp-<random> (which
// Walk sweeps once old) and returns its path; the file is closed, not
// synced. It speaks to the kernel directly: an os.File would add four
// fcntl and a failed epoll_ctl to each of a deploy's thousands of files
// (os makes every file it opens non-blocking for its poller, and a
// regular file refuses the poller), and one Stat of the destination to
// each rename (rename below).
func writeTemp(dir string, data []byte) (string, error) {
	for try := 0; ; try++ {
		name := filepath.Join(dir, ".tmp-"+strconv.FormatUint(rand.Uint64(), 36))
		fd, err := retryEINTR2(func() (int, error) {
			return unix.Open(name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o600)
		})
		if err == unix.EEXIST && try < 100 {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("create temp blob in %s: %w", dir, err)
		}
		err = writeAll(fd, data)
		if cerr := unix.Close(fd); err == nil && cerr != nil {
			err = fmt.Errorf("close: %w", cerr)
		}
		if err != nil {
			unix.Unlink(name)
			return "", fmt.Errorf("write temp blob %s: %w", name, err)
		}
		return name, nil
	}
}

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

// rename moves a temporary blob to its name. os.Rename would first Stat
// the destination to refuse a folder there, which a blob's name never is.
func rename(from, to string) error {
	if err := retryEINTR(func() error { return unix.Rename(from, to) }); err != nil {
		return fmt.Errorf("rename %s to %s: %w", from, to, err)
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
