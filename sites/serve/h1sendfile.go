package serve

import (
	"context"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"

	"sitedrop/sites/store"
)

// The HTTP/1.1 fast answer's larger bodies go with sendfile from the
// blob's file, as nginx sends them: the kernel then copies nothing on the
// sending side, where a write from memory copies the whole body into the
// socket (most of the cost of a 30 KB answer on loopback). The files stay
// open in a small cache (as nginx's open_file_cache), each shared by the
// connections that send it: sendfile with an explicit offset leaves the
// file's own offset alone, and a reference count closes an evicted file
// only once no send uses it (a descriptor closed under a send could be
// reused by another file). A blob's content never changes under its
// hash, so a cached file is never stale; one the collector deleted keeps
// its bytes until it is evicted.

// h1SendfileMin is the smallest body sent with sendfile: below it, the
// copy costs less than a second syscall.
const h1SendfileMin = 16 << 10

// defaultOpenFiles is the most blob files the cache holds open.
const defaultOpenFiles = 256

// fileCache keeps blob files open, by hash.
type fileCache struct {
	mu    sync.Mutex
	max   int
	files map[string]*openFile
	// noFiles is set once the store gave a blob that is not a file (an
	// S3 store): get then asks it nothing more, where each Open would be
	// a request to the store (a GET of the whole object) for nothing.
	noFiles atomic.Bool
}

// openFile is a cached open blob; refs counts the cache's hold and the
// sends in progress.
type openFile struct {
	blob store.Blob
	fd   int
	refs atomic.Int32
}

func newFileCache(max int) *fileCache {
	return &fileCache{max: max, files: map[string]*openFile{}}
}

// get returns hash's open file, from the cache or opened from blobs; nil
// when the store's blobs are not files (an S3 store) or it fails. The
// caller releases it after use.
func (c *fileCache) get(ctx context.Context, blobs store.BlobStore, hash string) *openFile {
	if c.noFiles.Load() {
		return nil
	}
	c.mu.Lock()
	if of := c.files[hash]; of != nil {
		of.refs.Add(1)
		c.mu.Unlock()
		return of
	}
	c.mu.Unlock()
	b, err := blobs.Open(ctx, hash)
	if err != nil {
		return nil
	}
	f, ok := b.(store.FileBlob)
	if !ok {
		c.noFiles.Store(true)
		b.Close()
		return nil
	}
	of := &openFile{blob: b, fd: int(f.OSFile().Fd())}
	of.refs.Store(2) // the cache's and the caller's
	c.mu.Lock()
	defer c.mu.Unlock()
	if prev := c.files[hash]; prev != nil { // opened twice at once: keep one
		prev.refs.Add(1)
		b.Close()
		return prev
	}
	for k, e := range c.files {
		if len(c.files) < c.max {
			break
		}
		delete(c.files, k)
		e.release()
	}
	c.files[hash] = of
	return of
}

// release drops a hold on the file; the last one closes it.
func (of *openFile) release() {
	if of.refs.Add(-1) == 0 {
		of.blob.Close()
	}
}

// sendfile sends head (with MSG_MORE: it leaves with the file's first
// bytes, in one segment, as nginx's TCP_CORK has it), then the first n
// bytes of of, on the TCP connection c, the netpoller waiting while the
// socket is full.
func sendfile(c *net.TCPConn, head []byte, of *openFile, n int64) (int64, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return 0, err
	}
	var off, sent int64
	var serr error
	err = rc.Write(func(fd uintptr) bool {
		for len(head) > 0 {
			m, err := syscall.SendmsgN(int(fd), head, nil, nil, syscall.MSG_MORE)
			if m > 0 {
				head = head[m:]
			}
			switch {
			case err == syscall.EAGAIN:
				return false
			case err == syscall.EINTR:
				continue
			case err != nil:
				serr = err
				return true
			}
		}
		for sent < n {
			m, err := syscall.Sendfile(int(fd), of.fd, &off, int(min(n-sent, 1<<30)))
			if m > 0 {
				sent += int64(m)
			}
			switch {
			case err == syscall.EAGAIN:
				return false // wait until the socket is writable
			case err == syscall.EINTR:
				continue
			case err != nil:
				serr = err
				return true
			case m == 0:
				serr = io.ErrUnexpectedEOF // the file is shorter than its size
				return true
			}
		}
		return true
	})
	if serr != nil {
		err = serr
	}
	return sent, err
}

// sendHeadFile writes head, then n bytes of of with sendfile (what is
// held is sent first). The sendfile is not told to onSend: it is the
// body of the answer whose head was.
func (c *Conn) sendHeadFile(head []byte, of *openFile, n int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return c.err
	}
	if err := c.flushLocked(); err != nil {
		return err
	}
	if len(head) > 0 {
		c.sent(len(head))
	}
	if _, err := sendfile(c.tcp, head, of, n); err != nil {
		c.err = err
		return err
	}
	return nil
}
