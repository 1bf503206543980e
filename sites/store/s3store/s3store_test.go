package s3store_test

import (
	"context"
	"errors"
	"testing"

	"sitedrop/sites/store/s3store"
	"sitedrop/sites/store/s3store/s3test"
	"sitedrop/sites/store/storetest"
)

func openStore(t *testing.T, prefix string) (*s3store.Store, *s3test.Server) {
	srv := s3test.Start(t)
	loc, err := s3store.ParseURL(srv.URL(srv.NewBucket(t), prefix))
	if err != nil {
		t.Fatal(err)
	}
	s, err := s3store.Open(context.Background(), loc)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s, srv
}

// TestS3StoreContract runs the BlobStore contract against versitygw.
func TestS3StoreContract(t *testing.T) {
	s, _ := openStore(t, "pre/fix")
	storetest.Contract(t, s)
}

// TestS3ConditionalPut checks that the server honours If-None-Match and
// If-Match, which the published manifests rely on.
func TestS3ConditionalPut(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t, "")
	etag, err := s.PutObject(ctx, "sites/a.json", []byte("1"), s3store.Condition{IfNoneMatch: true})
	if err != nil || etag == "" {
		t.Fatalf("create: %q, %v", etag, err)
	}
	if _, err := s.PutObject(ctx, "sites/a.json", []byte("x"), s3store.Condition{IfNoneMatch: true}); !errors.Is(err, s3store.ErrPrecondition) {
		t.Fatalf("create over an existing object: %v", err)
	}
	etag2, err := s.PutObject(ctx, "sites/a.json", []byte("2"), s3store.Condition{IfMatch: etag})
	if err != nil {
		t.Fatalf("replace with the right ETag: %v", err)
	}
	if _, err := s.PutObject(ctx, "sites/a.json", []byte("3"), s3store.Condition{IfMatch: etag}); !errors.Is(err, s3store.ErrPrecondition) {
		t.Fatalf("replace with a stale ETag: %v", err)
	}
	data, got, err := s.GetObject(ctx, "sites/a.json")
	if err != nil || string(data) != "2" || got != etag2 {
		t.Fatalf("get = %q %q %v, want 2 %q", data, got, err, etag2)
	}
	if _, _, err := s.GetObject(ctx, "sites/none.json"); !errors.Is(err, s3store.ErrNotFound) {
		t.Fatalf("get missing: %v", err)
	}
}

func TestParseURL(t *testing.T) {
	loc, err := s3store.ParseURL("s3://bkt/a/b/?endpoint=http://127.0.0.1:7070&region=eu-west-1")
	if err != nil {
		t.Fatal(err)
	}
	if loc.Bucket != "bkt" || loc.Prefix != "a/b/" || loc.Endpoint != "http://127.0.0.1:7070" || loc.Region != "eu-west-1" {
		t.Fatalf("%+v", loc)
	}
	if loc, err := s3store.ParseURL("s3://bkt"); err != nil || loc.Prefix != "" {
		t.Fatalf("no prefix: %+v %v", loc, err)
	}
	for _, bad := range []string{"file:///x", "s3:///nobucket", "s3://b/p?endpoint=ftp://x", "s3://b?regoin=x"} {
		if _, err := s3store.ParseURL(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// TestS3ConditionalGet: a read with the ETag the object still has is a
// 304 (ErrNotModified), with another one the object, and a missing
// object is ErrNotFound; the change feed's polling relies on it.
func TestS3ConditionalGet(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t, "")
	etag, err := s.PutObject(ctx, "sites/_feed.json", []byte("1"), s3store.Condition{})
	if err != nil {
		t.Fatal(err)
	}
	if _, got, err := s.GetObjectIfNoneMatch(ctx, "sites/_feed.json", etag); !errors.Is(err, s3store.ErrNotModified) || got != etag {
		t.Fatalf("unchanged: %q %v, want ErrNotModified", got, err)
	}
	etag2, err := s.PutObject(ctx, "sites/_feed.json", []byte("2"), s3store.Condition{IfMatch: etag})
	if err != nil {
		t.Fatal(err)
	}
	if data, got, err := s.GetObjectIfNoneMatch(ctx, "sites/_feed.json", etag); err != nil || string(data) != "2" || got != etag2 {
		t.Fatalf("changed: %q %q %v", data, got, err)
	}
	if data, _, err := s.GetObjectIfNoneMatch(ctx, "sites/_feed.json", ""); err != nil || string(data) != "2" {
		t.Fatalf("no ETag: %q %v", data, err)
	}
	if _, _, err := s.GetObjectIfNoneMatch(ctx, "sites/none.json", etag); !errors.Is(err, s3store.ErrNotFound) {
		t.Fatalf("missing: %v", err)
	}
}
