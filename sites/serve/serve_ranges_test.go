package serve

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"sitedrop/sites"
	"sitedrop/sites/store"
)

// seekCountingStore counts the seeks of the blobs it opens: on S3 each
// read after a seek is a ranged GET.
type seekCountingStore struct {
	store.BlobStore
	seeks *int
}

func (s seekCountingStore) Open(ctx context.Context, hash string) (store.Blob, error) {
	b, err := s.BlobStore.Open(ctx, hash)
	if err != nil {
		return nil, err
	}
	return seekCountingBlob{b, s.seeks}, nil
}

type seekCountingBlob struct {
	store.Blob
	seeks *int
}

func (b seekCountingBlob) Seek(off int64, whence int) (int64, error) {
	*b.seeks++
	return b.Blob.Seek(off, whence)
}

// TestManyRangesBounded: a Range of a file read from the store (too large
// for the content cache) with hundreds of small ranges does not cost a
// store request per range: past a few ranges, the whole file is sent.
func TestManyRangesBounded(t *testing.T) {
	fs, err := store.NewFSStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	big := []byte(strings.Repeat("0123456789abcdef", (maxCachedFile+4096)/16))
	h := store.HashBytes(big)
	if err := fs.Put(context.Background(), h, big); err != nil {
		t.Fatal(err)
	}
	site := &sites.Site{ID: "demo", Slug: "demo", Status: sites.StatusActive, Files: sites.Manifest{
		"big.bin": {Hash: h, Size: int64(len(big)), Type: "application/octet-stream"},
	}}
	seeks := new(int)
	srv := NewServer(func(string) (*sites.Site, error) { cp := *site; return &cp, nil }, seekCountingStore{fs, seeks})

	var ranges []string
	for i := range 500 {
		ranges = append(ranges, fmt.Sprintf("%d-%d", i*1000, i*1000))
	}
	res := get(srv, http.MethodGet, "/big.bin", map[string]string{"Range": "bytes=" + strings.Join(ranges, ",")})
	body(res)
	if *seeks > 2*maxRanges+2 {
		t.Fatalf("%d ranges cost %d seeks (store requests on S3); status %d", len(ranges), *seeks, res.StatusCode)
	}
	// a few ranges are still answered as ranges
	*seeks = 0
	res = get(srv, http.MethodGet, "/big.bin", map[string]string{"Range": "bytes=0-0,5000-5001"})
	if res.StatusCode != http.StatusPartialContent {
		t.Fatalf("two ranges: %d", res.StatusCode)
	}
}
