package replica

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"sitedrop/sites"
	"sitedrop/sites/publish"
	"sitedrop/sites/store"
	"sitedrop/sites/store/s3store"
)

// staleFeedObjects holds one document whose ETag is "B", and a feed whose
// change names it at "A" (a slower writer's); document reads are counted.
type staleFeedObjects struct {
	publish.Objects
	feed, doc []byte
	docGets   atomic.Int32
}

func (o *staleFeedObjects) GetObjectIfNoneMatch(_ context.Context, key, etag string) ([]byte, string, error) {
	if key != publish.FeedKey {
		return nil, "", s3store.ErrNotFound
	}
	if cur := `"` + store.HashBytes(o.feed) + `"`; etag != cur {
		return o.feed, cur, nil
	}
	return nil, etag, s3store.ErrNotModified
}

func (o *staleFeedObjects) GetObject(_ context.Context, key string) ([]byte, string, error) {
	o.docGets.Add(1)
	return o.doc, `"B"`, nil
}

func (o *staleFeedObjects) ListObjects(_ context.Context, _ string, fn func(s3store.ObjectInfo) error) error {
	return nil // listed before the site was published
}

// TestLoadCorrectsTheIndex: when the feed names a document at an ETag
// the store no longer has, the first request reads the document and the
// index takes its ETag, so the next requests make no read of it.
func TestLoadCorrectsTheIndex(t *testing.T) {
	const host = "demo.sites.test"
	doc, _ := json.Marshal(map[string]any{"generation": 2, "host": host, "hosts": []string{host},
		"site": sites.Site{ID: "site-a", Slug: "demo", Status: sites.StatusActive}})
	objs := &staleFeedObjects{doc: doc}
	f := publish.NewFeed()
	objs.feed, _ = json.Marshal(f)
	r := New(Config{Objects: objs})
	if err := r.Poll(context.Background()); err != nil { // lists: nothing
		t.Fatal(err)
	}
	f.Add(10, publish.Change{Host: host, ETag: `"A"`, Generation: 1})
	objs.feed, _ = json.Marshal(f)
	if err := r.Poll(context.Background()); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if s, err := r.load(host); err != nil || s.ID != "site-a" {
			t.Fatalf("load: %v %v", s, err)
		}
	}
	if n := objs.docGets.Load(); n != 1 {
		t.Fatalf("%d reads of the document for 3 requests, want 1", n)
	}
}
