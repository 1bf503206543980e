package s3store_test

import (
	"context"
	"errors"
	"maps"
	"sync"
	"testing"

	"sitedrop/sites/store"
	"sitedrop/sites/store/s3store"
)

// errorTally is a store.ErrorCounter that tallies by backend/op.
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

func (e *errorTally) counts() map[string]int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return maps.Clone(e.n)
}

var _ store.ErrorCounter = (*errorTally)(nil)

// TestCountErrors: a failed request is counted once, by its operation,
// after the SDK's retries; a missing object, an unmodified one and a
// failed condition are answers, not failures. A missing bucket is one.
func TestCountErrors(t *testing.T) {
	s, srv := openStore(t, "errs/")
	var tally errorTally
	s.CountErrors(&tally)
	ctx := context.Background()

	if _, _, err := s.GetObject(ctx, "missing"); !errors.Is(err, s3store.ErrNotFound) {
		t.Fatalf("missing object: %v", err)
	}
	if ok, err := s.Has(ctx, store.HashBytes([]byte("nothing"))); ok || err != nil {
		t.Fatalf("missing blob: %v %v", ok, err)
	}
	etag, err := s.PutObject(ctx, "doc", []byte("v1"), s3store.Condition{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.GetObjectIfNoneMatch(ctx, "doc", etag); !errors.Is(err, s3store.ErrNotModified) {
		t.Fatalf("unmodified: %v", err)
	}
	if _, err := s.PutObject(ctx, "doc", []byte("v2"), s3store.Condition{IfMatch: `"not-it"`}); err == nil {
		t.Fatal("a failed condition wrote")
	}
	if got := tally.counts(); len(got) != 0 {
		t.Fatalf("answers counted as failures: %v", got)
	}

	loc, err := s3store.ParseURL(srv.URL("no-such-bucket", ""))
	if err != nil {
		t.Fatal(err)
	}
	gone, err := s3store.Open(ctx, loc)
	if err != nil {
		t.Fatal(err)
	}
	gone.CountErrors(&tally)
	if _, _, err := gone.GetObject(ctx, "doc"); err == nil {
		t.Fatal("read from a missing bucket")
	}
	if got, want := tally.counts(), map[string]int{"s3/GetObject": 1}; !maps.Equal(got, want) {
		t.Errorf("counted %v, want %v", got, want)
	}
}
