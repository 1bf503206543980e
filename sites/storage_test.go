package sites_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tests"

	"sitedrop/sites"
	"sitedrop/sites/store"
)

// TestBlobSizesRule is the storage rule, one manifest set at a time: a
// blob counts once per account, variants count, a file's source does not.
func TestBlobSizesRule(t *testing.T) {
	cases := []struct {
		name string
		ms   []sites.Manifest
		want int64
	}{
		{"none", nil, 0},
		{"two files", []sites.Manifest{{"a": {Hash: "h1", Size: 10}, "b": {Hash: "h2", Size: 5}}}, 15},
		{"same bytes twice in a version", []sites.Manifest{{"a": {Hash: "h1", Size: 10}, "copy/a": {Hash: "h1", Size: 10}}}, 10},
		{"same bytes in two versions or sites", []sites.Manifest{{"a": {Hash: "h1", Size: 10}}, {"a": {Hash: "h1", Size: 10}, "b": {Hash: "h2", Size: 1}}}, 11},
		{"precompressed variants count", []sites.Manifest{{"a.css": {Hash: "h1", Size: 100, Encoded: map[string]sites.EncodedEntry{"br": {Hash: "b1", Size: 20}, "gzip": {Hash: "g1", Size: 30}}}}}, 150},
		{"a file's source is not counted", []sites.Manifest{{"i.html": {Hash: "h1", Size: 100, Source: "s1"}}}, 100},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sizes := map[string]int64{}
			for _, m := range c.ms {
				m.BlobSizes(sizes)
			}
			var n int64
			for _, s := range sizes {
				n += s
			}
			if n != c.want {
				t.Fatalf("%d bytes, want %d", n, c.want)
			}
		})
	}
}

// TestStorageBytes counts an account's kept versions over its sites,
// each blob once, and counts a blob another account holds too for each.
func TestStorageBytes(t *testing.T) {
	app, svc := newService(t)
	ctx := context.Background()
	owner := mustOwner(t, app)
	other := mustOwnerEmail(t, app, "other@example.com")
	deploy := func(o *core.Record, slug string, up sites.Upload) *core.Record {
		t.Helper()
		c, err := svc.Create(ctx, sites.CreateParams{Owner: o, Slug: slug, Upload: up})
		if err != nil {
			t.Fatal(err)
		}
		return c.Record
	}
	storage := func(o *core.Record) int64 {
		t.Helper()
		n, err := sites.StorageBytes(app, o.Id)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := storage(owner); n != 0 {
		t.Fatalf("no site: %d bytes", n)
	}
	rec := deploy(owner, "usage-one", files("a.txt", "aaaa", "b.txt", "bb"))
	if n := storage(owner); n != 6 {
		t.Fatalf("one site: %d bytes, want 6", n)
	}
	if _, err := svc.Replace(ctx, rec, sites.Metadata{}, files("a.txt", "aaaa", "c.txt", "ccc")); err != nil {
		t.Fatal(err)
	}
	if n := storage(owner); n != 9 {
		t.Fatalf("two versions (the first kept): %d bytes, want 9 (aaaa once, bb, ccc)", n)
	}
	deploy(owner, "usage-two", files("a.txt", "aaaa", "d.txt", "d"))
	if n := storage(owner); n != 10 {
		t.Fatalf("a second site sharing a file: %d bytes, want 10", n)
	}
	deploy(other, "usage-other", files("a.txt", "aaaa"))
	if n := storage(other); n != 4 {
		t.Fatalf("the other account: %d bytes, want 4 (a shared blob counts fully)", n)
	}
	if n := storage(owner); n != 10 {
		t.Fatalf("owner after another account's deploy: %d bytes, want 10", n)
	}
}

// TestStorageBytesPages: read a version at a time, the account's
// storage is the same (the keyset paging skips and repeats none).
func TestStorageBytesPages(t *testing.T) {
	app, svc := newService(t)
	ctx := context.Background()
	owner := mustOwner(t, app)
	c, err := svc.Create(ctx, sites.CreateParams{Owner: owner, Slug: "paged", Upload: files("a.txt", "1")})
	if err != nil {
		t.Fatal(err)
	}
	rec := c.Record
	for _, body := range []string{"22", "333", "4444"} {
		if rec, err = svc.Replace(ctx, rec, sites.Metadata{}, files("a.txt", body)); err != nil {
			t.Fatal(err)
		}
	}
	for _, batch := range []int{1, 2, 3, 4, 200} {
		restore := sites.SetStorageBatch(batch)
		n, err := sites.StorageBytes(app, owner.Id)
		restore()
		if err != nil {
			t.Fatal(err)
		}
		if n != 10 {
			t.Fatalf("batch %d: %d bytes, want 10 (1+2+3+4)", batch, n)
		}
	}
}

// BenchmarkStorageBytes measures the storage read of an account at the
// largest default plan's bound on one site's versions: 10 versions of
// 200 files each, half of them shared between versions.
func BenchmarkStorageBytes(b *testing.B) {
	app, err := tests.NewTestApp(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer app.Cleanup()
	blobStore, err := store.NewFSStore(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	svc := sites.NewService(app, blobStore, sites.ServiceConfig{})
	owner := mustOwner(b, app)
	ctx := context.Background()
	upload := func(v int) sites.Upload {
		var kv []string
		for i := range 200 {
			body := fmt.Sprintf("file %d", i)
			if i%2 == 1 {
				body += fmt.Sprintf(" of version %d", v)
			}
			kv = append(kv, fmt.Sprintf("f%03d.txt", i), body)
		}
		return files(kv...)
	}
	c, err := svc.Create(ctx, sites.CreateParams{Owner: owner, Slug: "bench-storage", Upload: upload(0)})
	if err != nil {
		b.Fatal(err)
	}
	rec := c.Record
	for v := 1; v < 10; v++ {
		if rec, err = svc.Replace(ctx, rec, sites.Metadata{}, upload(v)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := sites.StorageBytes(app, owner.Id); err != nil {
			b.Fatal(err)
		}
	}
}

func mustOwnerEmail(t *testing.T, app core.App, email string) *core.Record {
	t.Helper()
	col, _ := app.FindCollectionByNameOrId("users")
	u := core.NewRecord(col)
	u.SetEmail(email)
	u.SetRandomPassword()
	u.Set("plan", "free")
	if err := app.Save(u); err != nil {
		t.Fatal(err)
	}
	return u
}
