package sites

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"sitedrop/sites/store"
)

// askingStore is a BlobStore whose Has answers from a set, fails for one
// hash, and records how many questions were open at once. Has waits
// until hasParallel questions are open, so the test sees the
// concurrency without depending on timing (a store asked one question at
// a time waits out a long fallback, then fails the maxOpen check).
type askingStore struct {
	store.BlobStore
	have    map[string]bool
	fail    string
	open    atomic.Int32
	maxOpen atomic.Int32
	gate    chan struct{}
	once    sync.Once
}

func (a *askingStore) Has(ctx context.Context, h string) (bool, error) {
	n := a.open.Add(1)
	defer a.open.Add(-1)
	for {
		m := a.maxOpen.Load()
		if n <= m || a.maxOpen.CompareAndSwap(m, n) {
			break
		}
	}
	if n == hasParallel {
		a.once.Do(func() { close(a.gate) })
	}
	select {
	case <-a.gate:
	case <-ctx.Done():
		return false, ctx.Err()
	case <-time.After(10 * time.Second):
		// never that many at once: the maxOpen check says so
	}
	if h == a.fail {
		return false, errors.New("store unreachable")
	}
	return a.have[h], nil
}

func TestMissingBlobs(t *testing.T) {
	blobs := make(map[string][]byte)
	have := make(map[string]bool)
	var hashes []string
	for i := range 40 {
		data := []byte(strings.Repeat("x", i+1))
		h := store.HashBytes(data)
		blobs[h] = data
		hashes = append(hashes, h)
		if i%2 == 0 {
			have[h] = true
		}
	}

	st := &askingStore{have: have, gate: make(chan struct{})}
	missing, err := (&Service{store: st}).missingBlobs(context.Background(), blobs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(missing) != 20 {
		t.Fatalf("%d missing, want 20", len(missing))
	}
	for h := range missing {
		if have[h] {
			t.Fatalf("%s reported missing but the store has it", h)
		}
	}
	if got := st.maxOpen.Load(); got != hasParallel {
		t.Fatalf("at most %d questions at once, want %d", got, hasParallel)
	}

	// a store error is the answer, and nothing is reported missing
	st = &askingStore{have: have, fail: hashes[7], gate: make(chan struct{})}
	if _, err := (&Service{store: st}).missingBlobs(context.Background(), blobs, nil); err == nil || !strings.Contains(err.Error(), "store unreachable") {
		t.Fatalf("error %v, want the store's", err)
	}

	// a cancelled request stops with the deploy's own error
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	st = &askingStore{have: have, gate: make(chan struct{})}
	if _, err := (&Service{store: st}).missingBlobs(ctx, blobs, nil); err == nil || !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "deploy stopped") {
		t.Fatalf("error %v, want deploy stopped", err)
	}
}
