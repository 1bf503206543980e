package serve

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"sitedrop/sites/store"
)

// h1RemoteStore is a blob store whose blobs are not files (as an S3
// store's): it counts the blobs it opens, each a request to the store.
type h1RemoteStore struct {
	store.BlobStore
	opens atomic.Int64
}

// h1RemoteBlob hides the file under a blob (not a store.FileBlob).
type h1RemoteBlob struct{ store.Blob }

func (s *h1RemoteStore) Open(ctx context.Context, hash string) (store.Blob, error) {
	s.opens.Add(1)
	b, err := s.BlobStore.Open(ctx, hash)
	if err != nil {
		return nil, err
	}
	return h1RemoteBlob{b}, nil
}

// TestH1SendfileRemoteStore: with a store whose blobs are not files (S3),
// the fast answers of bodies large enough for sendfile come from the
// content cache without opening the blob again for each answer: the
// store is asked once for the bytes, and once to learn it has no files
// (each open was a GET of the whole object before).
func TestH1SendfileRemoteStore(t *testing.T) {
	srv, site := h1Site(t, false)
	remote := &h1RemoteStore{BlobStore: srv.store}
	srv.store = remote
	logo := site.Files["logo.png"]
	if logo.Size < h1SendfileMin || logo.Size > maxCachedFile {
		t.Fatalf("logo.png is %d bytes: not a sendfile body", logo.Size)
	}
	hh := newH1Harness(t, srv, true, nil)
	c, err := net.Dial("tcp", hh.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)
	const n = 5
	for i := range n {
		fmt.Fprintf(c, "GET /logo.png HTTP/1.1\r\nHost: demo.sites.test\r\n\r\n")
		res, err := http.ReadResponse(br, &http.Request{Method: "GET"})
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(res.Body)
		if err != nil || int64(len(b)) != logo.Size {
			t.Fatalf("answer %d: %d bytes (%v), want %d", i, len(b), err, logo.Size)
		}
	}
	c.Close()
	if got := hh.fast(); got != n {
		t.Fatalf("%d fast answers, want %d", got, n)
	}
	if got := remote.opens.Load(); got > 2 {
		t.Errorf("%d fast answers opened %d blobs, want at most 2 (the bytes, and learning the store has no files)", n, got)
	}
}
