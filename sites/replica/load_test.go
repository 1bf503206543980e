package replica

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"sitedrop/sites"
	"sitedrop/sites/publish"
	"sitedrop/sites/store/s3store"
)

// slowObjects publishes one host's document; a GetObject waits until
// release is closed, and every GetObject is counted.
type slowObjects struct {
	publish.Objects
	doc     []byte
	gets    atomic.Int32
	release chan struct{}
}

func (o *slowObjects) ListObjects(_ context.Context, _ string, fn func(s3store.ObjectInfo) error) error {
	return fn(s3store.ObjectInfo{Key: publish.Key("demo.sites.test"), ETag: `"v1"`, Size: int64(len(o.doc))})
}

// GetObjectIfNoneMatch finds no change feed: the replica lists.
func (o *slowObjects) GetObjectIfNoneMatch(context.Context, string, string) ([]byte, string, error) {
	return nil, "", s3store.ErrNotFound
}

func (o *slowObjects) GetObject(ctx context.Context, key string) ([]byte, string, error) {
	o.gets.Add(1)
	select {
	case <-o.release:
	case <-ctx.Done():
		return nil, "", ctx.Err()
	}
	return o.doc, `"v1"`, nil
}

// TestLoadSharesOneRead: many first requests at once for a site the
// replica has not read yet make one read of its document, and all of them
// get the site.
func TestLoadSharesOneRead(t *testing.T) {
	doc, err := json.Marshal(map[string]any{
		"generation": 1, "host": "demo.sites.test", "hosts": []string{"demo.sites.test"},
		"site": sites.Site{ID: "site-a", Slug: "demo", Status: sites.StatusActive},
	})
	if err != nil {
		t.Fatal(err)
	}
	objs := &slowObjects{doc: doc, release: make(chan struct{})}
	r := New(Config{Objects: objs})
	if err := r.Poll(context.Background()); err != nil {
		t.Fatal(err)
	}
	const n = 20
	var wg sync.WaitGroup
	got := make([]*sites.Site, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = r.load("demo.sites.test")
		}()
	}
	// let every load reach the store before the read answers (were they
	// not merged, each would be a GetObject of its own by then)
	for objs.gets.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	close(objs.release)
	wg.Wait()
	for i := range n {
		if errs[i] != nil || got[i] == nil || got[i].ID != "site-a" {
			t.Fatalf("load %d: %v, %v", i, got[i], errs[i])
		}
	}
	if g := objs.gets.Load(); g != 1 {
		t.Fatalf("%d reads of the document for %d concurrent first requests, want 1", g, n)
	}
}
