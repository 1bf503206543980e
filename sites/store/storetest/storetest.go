// Package storetest is the contract every store.BlobStore passes: the
// same table runs against the file store and the S3 store.
package storetest

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"sitedrop/sites/store"
)

// Store is a BlobStore with the optional methods sitedrop uses: Exists
// (blobs/missing), KeepUntil (uploads) and PutBatch (deploys).
type Store interface {
	store.BlobStore
	Exists(ctx context.Context, hash string) (bool, error)
	KeepUntil(ctx context.Context, hash string, t time.Time) error
	PutBatch(ctx context.Context, blobs map[string][]byte) error
}

// Contract checks s, which must start empty.
func Contract(t *testing.T, s Store) {
	ctx := context.Background()
	data := []byte("hello blob, long enough to read a range of it")
	h := store.HashBytes(data)

	if ok, err := s.Has(ctx, h); ok || err != nil {
		t.Fatalf("empty store: Has = %v, %v", ok, err)
	}
	if err := s.Put(ctx, store.HashBytes([]byte("other")), data); err == nil || !strings.Contains(err.Error(), "mismatch") {
		t.Fatalf("Put with the wrong hash: %v", err)
	}
	if err := s.Put(ctx, "../../etc/passwd", data); err == nil {
		t.Fatal("Put accepted a path as hash")
	}
	if err := s.Put(ctx, h, data); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, h, data); err != nil {
		t.Fatalf("Put of a blob already stored: %v", err)
	}
	for name, f := range map[string]func(context.Context, string) (bool, error){"Has": s.Has, "Exists": s.Exists} {
		if ok, err := f(ctx, h); !ok || err != nil {
			t.Fatalf("%s after Put = %v, %v", name, ok, err)
		}
	}

	b, err := s.Open(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(b)
	if string(got) != string(data) || b.Size() != int64(len(data)) || b.ModTime().IsZero() {
		t.Fatalf("read %q size %d mod %v", got, b.Size(), b.ModTime())
	}
	// a range, as http.ServeContent reads one
	if n, err := b.Seek(0, io.SeekEnd); err != nil || n != int64(len(data)) {
		t.Fatalf("Seek end = %d, %v", n, err)
	}
	if _, err := b.Seek(6, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	part := make([]byte, 4)
	if _, err := io.ReadFull(b, part); err != nil || string(part) != "blob" {
		t.Fatalf("range read %q, %v", part, err)
	}
	b.Close()
	if _, err := s.Open(ctx, store.HashBytes([]byte("missing"))); !errors.Is(err, store.ErrBlobNotFound) {
		t.Fatalf("Open missing: %v", err)
	}

	// KeepUntil moves the age the collector sees into the future
	until := time.Now().Add(3 * time.Hour).Truncate(time.Second)
	if err := s.KeepUntil(ctx, h, until); err != nil {
		t.Fatal(err)
	}
	var seen []string
	err = s.Walk(ctx, func(hash string, mod time.Time) error {
		seen = append(seen, hash)
		if mod.Before(until) {
			t.Errorf("Walk: %s modTime %v, before its KeepUntil %v", hash, mod, until)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1 || seen[0] != h {
		t.Fatalf("Walk saw %v", seen)
	}

	if err := s.Delete(ctx, h); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, h); err != nil {
		t.Fatalf("deleting twice: %v", err)
	}
	if ok, err := s.Has(ctx, h); ok || err != nil {
		t.Fatalf("Has after Delete = %v, %v", ok, err)
	}

	// batches: all stored, or none when one hash is wrong
	blobs := map[string][]byte{}
	for i := range 40 {
		d := []byte(strings.Repeat("x", i))
		blobs[store.HashBytes(d)] = d
	}
	if err := s.PutBatch(ctx, blobs); err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := s.Walk(ctx, func(hash string, _ time.Time) error {
		if _, ok := blobs[hash]; !ok {
			t.Errorf("Walk: unexpected %s", hash)
		}
		n++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n != len(blobs) {
		t.Fatalf("Walk saw %d blobs, want %d", n, len(blobs))
	}
	bad := map[string][]byte{store.HashBytes([]byte("a")): []byte("a"), store.HashBytes([]byte("b")): []byte("not b")}
	if err := s.PutBatch(ctx, bad); err == nil {
		t.Fatal("a blob with a wrong hash was accepted")
	}
	if ok, err := s.Exists(ctx, store.HashBytes([]byte("a"))); err != nil || ok {
		t.Errorf("a refused batch stored its good blob too (%v)", err)
	}
}
