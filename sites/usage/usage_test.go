package usage_test

import (
	"context"
	"testing"
	"time"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tests"

	_ "sitedrop/migrations"
	"sitedrop/sites"
	"sitedrop/sites/store"
	"sitedrop/sites/usage"
)

func upload(kv ...string) sites.Upload {
	up := sites.Upload{StorageType: sites.StorageFiles}
	for i := 0; i < len(kv); i += 2 {
		up.Files = append(up.Files, sites.File{Path: kv[i], ContentType: "text/plain", Data: []byte(kv[i+1])})
	}
	return up
}

// TestStorageKeptAgainstStamp: the account's storage is counted again
// when its versions change (a deploy, a deleted site), and kept while
// they do not: a manifest changed behind the service's back (which
// nothing does: versions are never edited) is not seen until then.
func TestStorageKeptAgainstStamp(t *testing.T) {
	app, err := tests.NewTestApp(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(app.Cleanup)
	blobStore, err := store.NewFSStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	svc := sites.NewService(app, blobStore, sites.ServiceConfig{})
	col, _ := app.FindCollectionByNameOrId("users")
	owner := core.NewRecord(col)
	owner.SetEmail("owner@example.com")
	owner.SetRandomPassword()
	if err := app.Save(owner); err != nil {
		t.Fatal(err)
	}
	u := usage.New(app, svc)
	now := time.Now()
	storage := func(at time.Time) int64 {
		t.Helper()
		a, err := u.Usage(owner, at)
		if err != nil {
			t.Fatal(err)
		}
		return a.StorageBytes
	}
	ctx := context.Background()
	c, err := svc.Create(ctx, sites.CreateParams{Owner: owner, Slug: "kept", Upload: upload("a.txt", "aaaa")})
	if err != nil {
		t.Fatal(err)
	}
	if n := storage(now); n != 4 {
		t.Fatalf("%d bytes, want 4", n)
	}
	// behind the service's back: the stamp holds, the count is kept
	ver, err := app.FindRecordById(sites.VersionsCollection, c.Record.GetString(sites.FieldLiveVersion))
	if err != nil {
		t.Fatal(err)
	}
	ver.Set(sites.FieldVersionManifest, `{"a.txt":{"hash":"x","size":1000,"type":"text/plain"}}`)
	if err := app.SaveNoValidate(ver); err != nil {
		t.Fatal(err)
	}
	if n := storage(now); n != 4 {
		t.Fatalf("%d bytes, want the kept 4", n)
	}
	if n := storage(now.Add(2 * time.Hour)); n != 1000 {
		t.Fatalf("after the TTL: %d bytes, want 1000 (counted again)", n)
	}
	if _, err := svc.Replace(ctx, c.Record, sites.Metadata{}, upload("a.txt", "aaaa", "b.txt", "bb")); err != nil {
		t.Fatal(err)
	}
	if n := storage(now.Add(2 * time.Hour)); n != 1006 {
		t.Fatalf("after a deploy: %d bytes, want 1006", n)
	}
	if err := app.Delete(c.Record); err != nil {
		t.Fatal(err)
	}
	if n := storage(now.Add(2 * time.Hour)); n != 0 {
		t.Fatalf("after deleting the site: %d bytes, want 0", n)
	}
}
