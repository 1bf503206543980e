package store

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestMakeBlobDirs: the server's start makes the 256 blob folders a store
// lacks (keeping what is there), after which a batch makes none; a folder
// removed behind the store's back is made again by the next batch.
func TestMakeBlobDirs(t *testing.T) {
	root := t.TempDir()
	s, err := NewFSStore(root)
	if err != nil {
		t.Fatal(err)
	}
	old := []byte("kept")
	if err := s.PutBatch(context.Background(), map[string][]byte{HashBytes(old): old}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "zz"), nil, 0o644); err != nil { // not a blob folder
		t.Fatal(err)
	}
	s, err = NewFSStore(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.MakeBlobDirs(); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	dirs := 0
	for _, e := range entries {
		if e.IsDir() {
			dirs++
		}
	}
	if dirs != 256 {
		t.Errorf("%d folders, want 256", dirs)
	}
	if ok, err := s.Has(context.Background(), HashBytes(old)); !ok || err != nil {
		t.Errorf("the blob put before: %v %v", ok, err)
	}
	for i := range s.dirsMade {
		if !s.dirsMade[i].Load() {
			t.Fatalf("folder %02x not marked made", i)
		}
	}
	b := []byte("after")
	h := HashBytes(b)
	if err := os.Remove(filepath.Join(root, h[:2])); err != nil {
		t.Fatal(err)
	}
	if err := s.PutBatch(context.Background(), map[string][]byte{h: b}); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Has(context.Background(), h); !ok || err != nil {
		t.Errorf("a blob whose folder was removed: %v %v", ok, err)
	}
}
