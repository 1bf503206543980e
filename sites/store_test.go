package sites

import (
	"context"
	"io"
	"os"
	"path/filepath"
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
