package sites_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"sitedrop/sites"
	"sitedrop/sites/store"
)

// countingStore counts the questions asked of a store.
type countingStore struct {
	store.BlobStore
	asked atomic.Int64
}

func (c *countingStore) Has(ctx context.Context, h string) (bool, error) {
	c.asked.Add(1)
	return c.BlobStore.Has(ctx, h)
}

// TestMissingHashesBudget: a store where each question is a request is
// asked about MaxStoreLookups blobs at most; what known knows is present
// with no question, what is not asked is answered missing; a file store
// is asked about each. The answer keeps the order asked.
func TestMissingHashesBudget(t *testing.T) {
	app, _ := newService(t)
	owner := mustOwner(t, app)
	fs, err := store.NewFSStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	st := &countingStore{BlobStore: fs}
	svc := sites.NewService(app, st, sites.ServiceConfig{})
	var asked []string
	for i := range sites.MaxStoreLookups + 44 {
		asked = append(asked, store.HashBytes(fmt.Appendf(nil, "blob %d", i)))
	}
	if err := fs.Put(context.Background(), asked[1], []byte("blob 1")); err != nil {
		t.Fatal(err)
	}
	known := func(h string) bool { return h == asked[0] }

	missing, err := svc.MissingHashes(context.Background(), owner, asked, known)
	if err != nil {
		t.Fatal(err)
	}
	if n := st.asked.Load(); n != sites.MaxStoreLookups {
		t.Fatalf("%d questions to the store, want %d", n, sites.MaxStoreLookups)
	}
	if !slices.Equal(missing, asked[2:]) {
		t.Fatalf("missing: %d hashes, want the %d after the first two, in order", len(missing), len(asked)-2)
	}

	st.asked.Store(0)
	missing, err = svc.MissingHashes(context.Background(), owner, asked, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := st.asked.Load(); n != int64(len(asked)) {
		t.Fatalf("file store: %d questions, want one per hash (%d)", n, len(asked))
	}
	if want := append([]string{asked[0]}, asked[2:]...); !slices.Equal(missing, want) {
		t.Fatalf("file store: missing %d hashes, want %d", len(missing), len(want))
	}
}

// TestPutUpload: bytes that do not hash to their name are refused with
// their sha256, and stored nowhere; the others are stored.
func TestPutUpload(t *testing.T) {
	_, svc := newService(t)
	ctx := context.Background()
	data := []byte("<p>uploaded</p>")
	h := store.HashBytes(data)
	wrong := store.HashBytes([]byte("other"))
	var che *sites.ContentHashError
	if err := svc.PutUpload(ctx, wrong, data); !errors.As(err, &che) || che.Got != h {
		t.Fatalf("PutUpload under another name: %v, want a *ContentHashError with %s", err, h)
	}
	if ok, _ := svc.Store().Has(ctx, wrong); ok {
		t.Fatal("refused upload stored")
	}
	if err := svc.PutUpload(ctx, h, data); err != nil {
		t.Fatal(err)
	}
	if ok, _ := svc.Store().Has(ctx, h); !ok {
		t.Fatal("upload not stored")
	}
}
