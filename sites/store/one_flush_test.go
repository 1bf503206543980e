package store

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// countedStore is an FSStore whose flushes are counted.
func countedStore(t *testing.T) (*FSStore, *atomic.Int32) {
	t.Helper()
	if !flushesWhole {
		t.Skip("one flush a batch needs a file system flushed whole (Linux)")
	}
	s, err := NewFSStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int32
	s.flushes = newGroupSync(func(dir string) (bool, error) {
		n.Add(1)
		return syncFileSystem(dir)
	})
	return s, &n
}

// someBlobs returns n distinct blobs whose bytes start with tag.
func someBlobs(tag string, n int) map[string][]byte {
	blobs := map[string][]byte{}
	for i := range n {
		b := []byte(tag + strings.Repeat("x", i))
		blobs[HashBytes(b)] = b
	}
	return blobs
}

// putName is the temporary hash name of blob h in s.
func putName(s *FSStore, h string) string {
	return filepath.Join(s.Root(), h[:2], putPrefix+h)
}

// blobPath is where s keeps blob h.
func blobPath(s *FSStore, h string) string {
	return filepath.Join(s.Root(), h[:2], h)
}

// readBlob reads blob h through Open.
func readBlob(t *testing.T, s *FSStore, h string) string {
	t.Helper()
	b, err := s.Open(context.Background(), h)
	if err != nil {
		t.Fatalf("open %s: %v", h, err)
	}
	defer b.Close()
	got, err := io.ReadAll(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(got)
}

// TestPutBatchSmallFlushesOnce: a batch of at most oneFlushBlobs blobs
// flushes the file system once; its blobs are named by their hashes when
// it returns, their temporary names are second names of the same files
// until the next batch's flush, which removes them. A larger batch
// flushes twice and leaves no temporary name.
func TestPutBatchSmallFlushesOnce(t *testing.T) {
	ctx := context.Background()
	s, flushes := countedStore(t)

	first := someBlobs("first", 3)
	if err := s.PutBatch(ctx, first); err != nil {
		t.Fatal(err)
	}
	if n := flushes.Load(); n != 1 {
		t.Fatalf("a batch of 3 flushed %d times, want 1", n)
	}
	for h, want := range first {
		if got := readBlob(t, s, h); got != string(want) {
			t.Fatalf("blob %s read %q", h, got)
		}
		a, err := os.Stat(blobPath(s, h))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.Stat(putName(s, h))
		if err != nil || !os.SameFile(a, b) {
			t.Fatalf("the temporary name is not a second name of the blob until the next flush (%v)", err)
		}
	}

	second := someBlobs("second", oneFlushBlobs)
	if err := s.PutBatch(ctx, second); err != nil {
		t.Fatal(err)
	}
	if n := flushes.Load(); n != 2 {
		t.Fatalf("a batch of %d flushed %d times, want 1", oneFlushBlobs, n-1)
	}
	for h := range first {
		if _, err := os.Lstat(putName(s, h)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("the first batch's temporary name stays after the next flush (%v)", err)
		}
		if _, err := os.Stat(blobPath(s, h)); err != nil {
			t.Fatalf("the first batch's blob went with its temporary name: %v", err)
		}
	}

	large := someBlobs("large", oneFlushBlobs+1)
	if err := s.PutBatch(ctx, large); err != nil {
		t.Fatal(err)
	}
	if n := flushes.Load(); n != 4 {
		t.Fatalf("a batch of %d flushed %d times, want 2", oneFlushBlobs+1, n-2)
	}
	for h, want := range large {
		if _, err := os.Lstat(putName(s, h)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("a large batch left a temporary hash name (%v)", err)
		}
		if got := readBlob(t, s, h); got != string(want) {
			t.Fatalf("blob %s read %q", h, got)
		}
	}
	for h := range second {
		if _, err := os.Lstat(putName(s, h)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("the large batch's flush did not remove the earlier temporary names (%v)", err)
		}
	}

	// nothing comes after the last small batch: the collector's walk
	// flushes and removes its temporary names
	last := someBlobs("last", 2)
	if err := s.PutBatch(ctx, last); err != nil {
		t.Fatal(err)
	}
	if err := s.Walk(ctx, func(string, time.Time) error { return nil }); err != nil {
		t.Fatal(err)
	}
	for h := range last {
		if _, err := os.Lstat(putName(s, h)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("Walk left the last batch's temporary name (%v)", err)
		}
		if _, err := os.Stat(blobPath(s, h)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPutBatchTakenHashName: when a blob's temporary hash name is taken
// (another batch writes the same blob, or a crash left a file there), the
// batch writes it under a random name and flushes twice; the blob is
// whole and the other file is not touched.
func TestPutBatchTakenHashName(t *testing.T) {
	ctx := context.Background()
	s, flushes := countedStore(t)
	data := []byte("the real bytes")
	h := HashBytes(data)
	if err := os.MkdirAll(filepath.Dir(putName(s, h)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(putName(s, h), []byte("half writ"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.PutBatch(ctx, map[string][]byte{h: data}); err != nil {
		t.Fatal(err)
	}
	if n := flushes.Load(); n != 2 {
		t.Fatalf("flushed %d times, want 2", n)
	}
	if got := readBlob(t, s, h); got != string(data) {
		t.Fatalf("read %q", got)
	}
	if got, _ := os.ReadFile(putName(s, h)); string(got) != "half writ" {
		t.Fatalf("the other file was changed: %q", got)
	}
}

// TestOpenCompletesALostLink: a crash after a one-flush batch may lose a
// blob's link and leave it under its temporary hash name alone; Open
// finds it there and names it, unless its bytes are not the blob's.
func TestOpenCompletesALostLink(t *testing.T) {
	ctx := context.Background()
	s, err := NewFSStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	good := []byte("whole and durable")
	h := HashBytes(good)
	if err := os.MkdirAll(filepath.Dir(putName(s, h)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(putName(s, h), good, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := readBlob(t, s, h); got != string(good) {
		t.Fatalf("read %q", got)
	}
	if _, err := os.Stat(blobPath(s, h)); err != nil {
		t.Fatalf("Open did not name the blob: %v", err)
	}

	torn := HashBytes([]byte("written in full"))
	if err := os.MkdirAll(filepath.Dir(putName(s, torn)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(putName(s, torn), []byte("written in"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Open(ctx, torn); err != ErrBlobNotFound {
		t.Fatalf("Open of a blob whose temporary file is torn: %v, want ErrBlobNotFound", err)
	}
	if _, err := os.Lstat(blobPath(s, torn)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a torn file was named as the blob (%v)", err)
	}
}

// TestWalkSweepsTemporaryHashNames: Walk leaves young temporary hash
// names alone (a batch may be writing them) and, once they are an hour
// old, removes second names, stale copies and torn files, and names a
// blob that only its temporary name holds.
func TestWalkSweepsTemporaryHashNames(t *testing.T) {
	ctx := context.Background()
	s, err := NewFSStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * time.Hour)
	put := func(content string, hash string, age time.Time) string {
		p := putName(s, hash)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, age, age); err != nil {
			t.Fatal(err)
		}
		return p
	}
	lonely := HashBytes([]byte("lonely"))
	lonelyTmp := put("lonely", lonely, old)
	torn := HashBytes([]byte("torn in two"))
	tornTmp := put("torn", torn, old)
	young := HashBytes([]byte("being written"))
	youngTmp := put("being", young, time.Now())
	second := HashBytes([]byte("linked"))
	secondTmp := put("linked", second, old)
	if err := os.Link(secondTmp, blobPath(s, second)); err != nil {
		t.Fatal(err)
	}
	stale := HashBytes([]byte("stale"))
	if err := s.Put(ctx, stale, []byte("stale")); err != nil {
		t.Fatal(err)
	}
	staleTmp := put("stale", stale, old)
	badName := filepath.Join(s.Root(), "ab", putPrefix+"not-a-hash")
	if err := os.MkdirAll(filepath.Dir(badName), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(badName, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(badName, old, old)

	if err := s.Walk(ctx, func(string, time.Time) error { return nil }); err != nil {
		t.Fatal(err)
	}
	gone := func(p, what string) {
		t.Helper()
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s not removed (%v)", what, err)
		}
	}
	gone(tornTmp, "a torn temporary file")
	gone(secondTmp, "a second name")
	gone(staleTmp, "a stale copy")
	gone(badName, "a temporary name with no hash")
	gone(blobPath(s, torn), "the blob of a torn file (never named)")
	if _, err := os.Stat(youngTmp); err != nil {
		t.Errorf("a young temporary file was removed: %v", err)
	}
	if got, err := os.ReadFile(blobPath(s, lonely)); err != nil || string(got) != "lonely" {
		t.Errorf("the blob its temporary name alone held was not named: %q %v", got, err)
	}
	if got, err := os.ReadFile(blobPath(s, second)); err != nil || string(got) != "linked" {
		t.Errorf("a blob lost with its second name: %q %v", got, err)
	}
	// the next walk removes the temporary name of the blob it named
	if err := s.Walk(ctx, func(string, time.Time) error { return nil }); err != nil {
		t.Fatal(err)
	}
	gone(lonelyTmp, "the temporary name of a blob named at the last walk")
	if got, err := os.ReadFile(blobPath(s, lonely)); err != nil || string(got) != "lonely" {
		t.Errorf("the named blob went with its temporary name: %q %v", got, err)
	}
}

// TestPutBatchConcurrentSameBlobs: batches that store the same blobs at
// the same time (two deploys of one page) all succeed, each blob whole,
// whichever batch names it. A temporary name left beside its blob is a
// second name of it, removed by the walk's flush, or a whole copy (a
// batch that found the name taken renamed its own copy over the link),
// which the sweep removes once an hour old: not before, since the
// rename that replaced it may not be on disk yet.
func TestPutBatchConcurrentSameBlobs(t *testing.T) {
	ctx := context.Background()
	s, _ := countedStore(t)
	shared := someBlobs("shared", 3)
	done := make(chan error)
	for i := range 8 {
		go func() {
			batch := someBlobs("own"+strings.Repeat("+", i), 2)
			for h, b := range shared {
				batch[h] = b
			}
			done <- s.PutBatch(ctx, batch)
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	for h, want := range shared {
		if got := readBlob(t, s, h); got != string(want) {
			t.Fatalf("blob %s read %q", h, got)
		}
	}
	if err := s.Walk(ctx, func(string, time.Time) error { return nil }); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * time.Hour)
	for h, want := range shared {
		a, err := os.Lstat(putName(s, h))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		b, _ := os.Lstat(blobPath(s, h))
		if got, _ := os.ReadFile(putName(s, h)); string(got) != string(want) || os.SameFile(a, b) {
			t.Fatalf("left beside its blob after the walk's flush: a second name (%v) or a copy of %d bytes", os.SameFile(a, b), len(got))
		}
		os.Chtimes(putName(s, h), old, old) // the copy's file, not the blob's
	}
	if err := s.Walk(ctx, func(string, time.Time) error { return nil }); err != nil {
		t.Fatal(err)
	}
	for h, want := range shared {
		if _, err := os.Lstat(putName(s, h)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("an hour-old copy stays after the sweep (%v)", err)
		}
		if got := readBlob(t, s, h); got != string(want) {
			t.Fatalf("blob %s read %q after the sweep", h, got)
		}
	}
}

// TestSecondNamesGoOnlyAfterAFlush pins the order that keeps a blob named
// on disk: a batch's temporary names are still there when the next
// flush starts (removed after it, not before), and a name linked while
// a batch's flush runs is left for a later flush (the queue is taken
// before the flush, not after).
func TestSecondNamesGoOnlyAfterAFlush(t *testing.T) {
	ctx := context.Background()
	s, _ := countedStore(t)
	first := someBlobs("first", 2)
	if err := s.PutBatch(ctx, first); err != nil {
		t.Fatal(err)
	}
	// a blob linked from its temporary name by "another batch" while
	// the next batch's flush runs
	late := []byte("linked during the flush")
	lh := HashBytes(late)
	if err := os.MkdirAll(filepath.Dir(putName(s, lh)), 0o755); err != nil {
		t.Fatal(err)
	}
	var atFlush []string
	s.flushes = newGroupSync(func(dir string) (bool, error) {
		for h := range first {
			if _, err := os.Lstat(putName(s, h)); err != nil {
				atFlush = append(atFlush, h)
			}
		}
		if _, err := os.Lstat(putName(s, lh)); errors.Is(err, os.ErrNotExist) {
			if err := os.WriteFile(putName(s, lh), late, 0o600); err != nil {
				return false, err
			}
			if err := os.Link(putName(s, lh), blobPath(s, lh)); err != nil {
				return false, err
			}
			s.linked.add(secondName{filepath.Dir(blobPath(s, lh)), lh})
		}
		return syncFileSystem(dir)
	})
	if err := s.PutBatch(ctx, someBlobs("second", 2)); err != nil {
		t.Fatal(err)
	}
	if len(atFlush) > 0 {
		t.Fatalf("temporary names removed before the flush that makes their links durable: %v", atFlush)
	}
	for h := range first {
		if _, err := os.Lstat(putName(s, h)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("the first batch's temporary name stays after the flush (%v)", err)
		}
	}
	if _, err := os.Lstat(putName(s, lh)); err != nil {
		t.Fatalf("a name linked during the flush was removed after it, its link not flushed: %v", err)
	}
}

// TestTouchedBlobLosesItsSecondName: a blob asked about (Has refreshes
// its age) between its batch and the next still loses its temporary
// name at the next flush, and a deleted blob does not come back through
// a temporary name left beside it.
func TestTouchedBlobLosesItsSecondName(t *testing.T) {
	ctx := context.Background()
	s, _ := countedStore(t)
	blobs := someBlobs("touched", 1)
	var h string
	for h = range blobs {
	}
	if err := s.PutBatch(ctx, blobs); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	if ok, err := s.Has(ctx, h); !ok || err != nil {
		t.Fatalf("Has: %v %v", ok, err)
	}
	if err := s.KeepUntil(ctx, h, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := s.PutBatch(ctx, someBlobs("next", 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(putName(s, h)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a touched blob kept its temporary name after the next flush (%v)", err)
	}

	// a temporary name left beside the blob (a restart lost the queue)
	if err := os.Link(blobPath(s, h), putName(s, h)); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, h); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Open(ctx, h); err != ErrBlobNotFound {
		t.Fatalf("Open of a deleted blob: %v, want ErrBlobNotFound", err)
	}
	if _, err := os.Lstat(putName(s, h)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Delete left the blob's temporary name (%v)", err)
	}
}

// TestCompletePutFlushesFirst: Open names a blob found under its
// temporary name alone only after a flush (a batch may still be writing
// it, its bytes not yet durable).
func TestCompletePutFlushesFirst(t *testing.T) {
	s, flushes := countedStore(t)
	data := []byte("left by a crash")
	h := HashBytes(data)
	if err := os.MkdirAll(filepath.Dir(putName(s, h)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(putName(s, h), data, 0o600); err != nil {
		t.Fatal(err)
	}
	var named bool
	s.flushes = newGroupSync(func(dir string) (bool, error) {
		flushes.Add(1)
		_, err := os.Lstat(blobPath(s, h))
		named = err == nil
		return syncFileSystem(dir)
	})
	if got := readBlob(t, s, h); got != string(data) {
		t.Fatalf("read %q", got)
	}
	if flushes.Load() != 1 || named {
		t.Fatalf("%d flushes, the blob named before the flush: %v; want one flush before the name", flushes.Load(), named)
	}
}

// TestSweepFlushesBeforeItRemoves: the hour-old temporary names the
// sweep finds beside their blobs are removed after a flush (the blob's
// hash name may have been given since the last one, by Open), never
// before it.
func TestSweepFlushesBeforeItRemoves(t *testing.T) {
	ctx := context.Background()
	s, _ := countedStore(t)
	data := []byte("named again by Open")
	h := HashBytes(data)
	if err := os.MkdirAll(filepath.Dir(putName(s, h)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(putName(s, h), data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(putName(s, h), blobPath(s, h)); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * time.Hour)
	os.Chtimes(putName(s, h), old, old)
	var seen []bool // at each flush: the temporary name still there
	s.flushes = newGroupSync(func(dir string) (bool, error) {
		_, err := os.Lstat(putName(s, h))
		seen = append(seen, err == nil)
		return syncFileSystem(dir)
	})
	if err := s.Walk(ctx, func(string, time.Time) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1 || !seen[0] {
		t.Fatalf("flushes while the sweep ran, the name there at each: %v; want one, before the removal", seen)
	}
	if _, err := os.Lstat(putName(s, h)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the sweep left an hour-old second name (%v)", err)
	}
	if got := readBlob(t, s, h); got != string(data) {
		t.Fatalf("read %q", got)
	}
}
