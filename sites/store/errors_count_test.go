package store

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// errorTally is an ErrorCounter that tallies by backend/op.
type errorTally struct {
	mu sync.Mutex
	n  map[string]int
}

func (e *errorTally) StoreError(backend, op string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.n == nil {
		e.n = map[string]int{}
	}
	e.n[backend+"/"+op]++
}

// TestFSStoreCountErrors: a write that fails is counted; a missing blob
// read or deleted is not a failure.
func TestFSStoreCountErrors(t *testing.T) {
	s, err := NewFSStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var tally errorTally
	s.CountErrors(&tally)
	ctx := context.Background()
	data := []byte("blocked")
	hash := HashBytes(data)
	if _, err := s.Open(ctx, hash); !errors.Is(err, ErrBlobNotFound) {
		t.Fatalf("missing blob: %v", err)
	}
	if err := s.Delete(ctx, hash); err != nil {
		t.Fatal(err)
	}
	// a file where the blob's folder should be: the write fails
	if err := os.WriteFile(filepath.Join(s.Root(), hash[:2]), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, hash, data); err == nil {
		t.Fatal("Put wrote under a file")
	}
	if err := s.PutBatch(ctx, map[string][]byte{hash: data}); err == nil {
		t.Fatal("PutBatch wrote under a file")
	}
	if want := map[string]int{"file/put": 2}; !maps.Equal(tally.n, want) {
		t.Errorf("counted %v, want %v", tally.n, want)
	}
}
