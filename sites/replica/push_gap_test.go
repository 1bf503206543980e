package replica

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"sitedrop/sites/publish"
	"sitedrop/sites/store/s3store"
)

// tokenOnly is an object store holding only the replica token: all the
// long poll reads of it.
type tokenOnly struct{}

func (tokenOnly) GetObject(_ context.Context, key string) ([]byte, string, error) {
	if key == publish.TokenKey {
		return []byte("tok"), "e", nil
	}
	return nil, "", s3store.ErrNotFound
}
func (tokenOnly) PutObject(context.Context, string, []byte, s3store.Condition) (string, error) {
	return "", fmt.Errorf("read-only")
}
func (tokenOnly) DeleteObject(context.Context, string) error { return fmt.Errorf("read-only") }
func (tokenOnly) ListObjects(context.Context, string, func(s3store.ObjectInfo) error) error {
	return nil
}
func (tokenOnly) GetObjectIfNoneMatch(context.Context, string, string) ([]byte, string, error) {
	return nil, "", s3store.ErrNotFound
}

// TestFollowKeepsAGapBetweenAsks: a primary (or anything at --primary)
// that answers every long poll at once, with a new position each time,
// costs at most one request per minAskGap, never a tight loop.
func TestFollowKeepsAGapBetweenAsks(t *testing.T) {
	var asks atomic.Int64
	primary := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := asks.Add(1)
		fmt.Fprintf(w, `{"position":"e1:%d"}`, n)
	}))
	defer primary.Close()
	r := New(Config{Objects: tokenOnly{}, Primary: primary.URL})
	const run = 500 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), run)
	defer cancel()
	r.follow(ctx)
	if n, most := asks.Load(), int64(run/minAskGap)+1; n > most || n < 2 {
		t.Fatalf("%d long polls in %v, want 2 to %d (one per %v at most)", n, run, most, minAskGap)
	}
}
