package store

import (
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestFSStore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := NewFSStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	data := []byte("hello blob")
	h := HashBytes(data)

	if ok, _ := s.Has(ctx, h); ok {
		t.Fatal("empty store has a blob")
	}
	if err := s.Put(ctx, HashBytes([]byte("other")), data); err == nil || !strings.Contains(err.Error(), "mismatch") {
		t.Fatalf("Put with the wrong hash: %v", err)
	}
	if err := s.Put(ctx, "../../etc/passwd", data); err == nil {
		t.Fatal("Put accepted a path as hash")
	}
	if err := s.Put(ctx, h, data); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, h[:2], h)); err != nil {
		t.Fatalf("blob not at <root>/<h[:2]>/<h>: %v", err)
	}
	if ok, _ := s.Has(ctx, h); !ok {
		t.Fatal("Has after Put")
	}
	b, err := s.Open(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(b)
	b.Close()
	if string(got) != string(data) || b.Size() != int64(len(data)) {
		t.Fatalf("read %q size %d", got, b.Size())
	}
	if _, err := s.Open(ctx, HashBytes([]byte("missing"))); err != ErrBlobNotFound {
		t.Fatalf("Open missing: %v", err)
	}

	// a temp file left by a crash is not a blob, and old ones are swept
	tmp := filepath.Join(dir, h[:2], ".tmp-crash")
	os.WriteFile(tmp, []byte("partial"), 0o644)
	old := time.Now().Add(-2 * time.Hour)
	os.Chtimes(tmp, old, old)
	var seen []string
	if err := s.Walk(ctx, func(hash string, _ time.Time) error { seen = append(seen, hash); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1 || seen[0] != h {
		t.Fatalf("Walk saw %v", seen)
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Fatal("old temp file not swept")
	}

	if err := s.Delete(ctx, h); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, h); err != nil {
		t.Fatalf("deleting twice: %v", err)
	}
	if ok, _ := s.Has(ctx, h); ok {
		t.Fatal("Has after Delete")
	}
}

func TestValidHash(t *testing.T) {
	for _, s := range []struct {
		in   string
		want bool
	}{
		{HashBytes(nil), true},
		{strings.ToUpper(HashBytes(nil)), false},
		{HashBytes(nil)[:63], false},
		{HashBytes(nil) + "0", false},
		{strings.Repeat("g", 64), false},
		{"", false},
	} {
		if got := ValidHash(s.in); got != s.want {
			t.Errorf("ValidHash(%q) = %v", s.in, got)
		}
	}
}

// TestFSStorePutBatch stores many blobs at once; a bad hash stores none
// and leaves no temporary file.
func TestFSStorePutBatch(t *testing.T) {
	ctx := context.Background()
	s, err := NewFSStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	blobs := map[string][]byte{}
	for i := range 300 {
		b := []byte(strings.Repeat("x", i))
		blobs[HashBytes(b)] = b
	}
	if err := s.PutBatch(ctx, blobs); err != nil {
		t.Fatal(err)
	}
	for h, want := range blobs {
		b, err := s.Open(ctx, h)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(b)
		b.Close()
		if string(got) != string(want) {
			t.Fatalf("blob %s: %d bytes, want %d", h, len(got), len(want))
		}
	}
	if err := s.PutBatch(ctx, nil); err != nil {
		t.Fatalf("empty batch: %v", err)
	}
	bad := map[string][]byte{HashBytes([]byte("a")): []byte("a"), HashBytes([]byte("b")): []byte("not b")}
	if err := s.PutBatch(ctx, bad); err == nil {
		t.Fatal("a blob with a wrong hash was accepted")
	}
	if ok, err := s.Exists(ctx, HashBytes([]byte("a"))); err != nil || ok {
		t.Errorf("a refused batch stored its good blob too (%v)", err)
	}
	err = filepath.WalkDir(s.Root(), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), ".tmp-") {
			t.Errorf("temporary file left: %s", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestFSStorePutBatchRemakesARemovedFolder: the store remembers the blob
// folders it made, and makes one again when it was removed behind its
// back; blobs are written whole, readable by their owner only, and a
// blob stored again (another deploy of the same bytes) stays whole.
func TestFSStorePutBatchRemakesARemovedFolder(t *testing.T) {
	ctx := context.Background()
	s, err := NewFSStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a := []byte(strings.Repeat("a", 70000)) // more than one write may take
	h := HashBytes(a)
	if err := s.PutBatch(ctx, map[string][]byte{h: a}); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(s.Root(), h[:2])); err != nil {
		t.Fatal(err)
	}
	if err := s.PutBatch(ctx, map[string][]byte{h: a}); err != nil {
		t.Fatalf("a batch into a removed folder: %v", err)
	}
	if err := s.PutBatch(ctx, map[string][]byte{h: a}); err != nil {
		t.Fatalf("the same blob again: %v", err)
	}
	p := filepath.Join(s.Root(), h[:2], h)
	got, err := os.ReadFile(p)
	if err != nil || string(got) != string(a) {
		t.Fatalf("blob read back: %d bytes, %v", len(got), err)
	}
	if st, err := os.Stat(p); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("blob mode %v (%v), want 0600 as os.CreateTemp made them", st.Mode().Perm(), err)
	}
}

// TestFSStoreDeletions: every Delete moves the count, of a missing blob
// too; nothing else does.
func TestFSStoreDeletions(t *testing.T) {
	ctx := context.Background()
	s, err := NewFSStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	data := []byte("counted")
	h := HashBytes(data)
	if err := s.PutBatch(ctx, map[string][]byte{h: data}); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, HashBytes([]byte("x")), []byte("x")); err != nil {
		t.Fatal(err)
	}
	if n := s.Deletions(); n != 0 {
		t.Fatalf("%d deletions after writes", n)
	}
	if err := s.Delete(ctx, h); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, h); err != nil {
		t.Fatal(err)
	}
	if n := s.Deletions(); n != 2 {
		t.Fatalf("%d deletions after two, want 2", n)
	}
}

// TestWriteKeepsAnExistingBlob: storing a blob the store already has (two
// deploys of the same file, each told it was missing) leaves the file
// that holds it as it is, instead of renaming a new one over it (which
// frees the file a committed version may name: on ext4 without a
// journal, a crash in that rename can leave the name pointing at the
// freed file); its age is refreshed as a new file's would be, and no
// temporary file is left.
func TestWriteKeepsAnExistingBlob(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("elsewhere a rename replaces the file")
	}
	ctx := context.Background()
	s, err := NewFSStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	data := []byte("the same bytes, stored twice")
	h := HashBytes(data)
	if err := s.PutBatch(ctx, map[string][]byte{h: data}); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(s.Root(), h[:2], h)
	first, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, write := range []struct {
		name string
		put  func() error
	}{
		{"PutBatch", func() error { return s.PutBatch(ctx, map[string][]byte{h: data}) }},
		{"Put", func() error { return s.Put(ctx, h, data) }},
	} {
		old := time.Now().Add(-2 * time.Hour)
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
		if err := write.put(); err != nil {
			t.Fatalf("%s: %v", write.name, err)
		}
		now, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if !os.SameFile(first, now) {
			t.Fatalf("%s replaced the blob's file", write.name)
		}
		if time.Since(now.ModTime()) > time.Minute {
			t.Fatalf("%s left the blob's age at %v", write.name, now.ModTime())
		}
		entries, err := os.ReadDir(filepath.Dir(p))
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 1 {
			t.Fatalf("%s left %d files in the blob's folder, want the blob alone", write.name, len(entries))
		}
	}
	// a KeepUntil is not shortened
	later := time.Now().Add(3 * time.Hour).Truncate(time.Second)
	if err := s.KeepUntil(ctx, h, later); err != nil {
		t.Fatal(err)
	}
	if err := s.PutBatch(ctx, map[string][]byte{h: data}); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(p); !st.ModTime().Equal(later) {
		t.Fatalf("a write shortened a KeepUntil: %v, want %v", st.ModTime(), later)
	}
}
