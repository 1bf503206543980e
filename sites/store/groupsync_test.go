package store

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// blockingFlush is a flush that counts its calls and, while hold is set,
// waits for release.
type blockingFlush struct {
	calls   atomic.Int32
	entered chan struct{}
	release chan struct{}
	err     error
}

func (b *blockingFlush) flush(string) (bool, error) {
	b.calls.Add(1)
	b.entered <- struct{}{}
	<-b.release
	return true, b.err
}

// waitWaiting waits until n callers wait in g for a flush to finish.
func waitWaiting(t *testing.T, g *groupSync, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		g.mu.Lock()
		w := g.waiting
		g.mu.Unlock()
		if w == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d callers waiting, want %d", w, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestGroupSyncSharesTheNextFlush: callers that arrive while a flush runs
// do not count on it (it may have started before their writes); they
// share one next flush, instead of one each.
func TestGroupSyncSharesTheNextFlush(t *testing.T) {
	b := &blockingFlush{entered: make(chan struct{}, 10), release: make(chan struct{})}
	g := newGroupSync(b.flush)
	var wg sync.WaitGroup
	var returned atomic.Int32
	call := func() {
		defer wg.Done()
		if _, err := g.sync("dir"); err != nil {
			t.Error(err)
		}
		returned.Add(1)
	}
	wg.Add(1)
	go call()
	<-b.entered // the first flush runs
	const late = 5
	wg.Add(late)
	for range late {
		go call()
	}
	waitWaiting(t, g, late)
	if n := returned.Load(); n != 0 {
		t.Fatalf("%d returned before any flush finished", n)
	}
	b.release <- struct{}{} // the first flush ends
	<-b.entered             // the late callers' flush starts
	waitWaiting(t, g, late-1)
	if n := returned.Load(); n > 1 {
		t.Fatalf("%d returned after the first flush, want only its caller", n)
	}
	b.release <- struct{}{}
	wg.Wait()
	if n := b.calls.Load(); n != 2 {
		t.Fatalf("%d flushes for 1+%d callers, want 2", n, late)
	}
}

// TestGroupSyncReportsTheFlushError: a failed flush's error reaches each
// caller it served, and the next caller gets a flush of its own.
func TestGroupSyncReportsTheFlushError(t *testing.T) {
	boom := errors.New("boom")
	calls := 0
	g := newGroupSync(func(string) (bool, error) {
		calls++
		if calls == 1 {
			return false, boom
		}
		return true, nil
	})
	if _, err := g.sync("dir"); !errors.Is(err, boom) {
		t.Fatalf("first: %v, want boom", err)
	}
	if whole, err := g.sync("dir"); err != nil || !whole {
		t.Fatalf("second: %v %v", whole, err)
	}
	if calls != 2 {
		t.Fatalf("%d flushes, want 2", calls)
	}
}
