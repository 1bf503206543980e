package sites_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tests"

	_ "sitedrop/migrations"
	"sitedrop/sites"
	"sitedrop/sites/store"
)

func newService(t *testing.T) (*tests.TestApp, *sites.Service) {
	t.Helper()
	app, err := tests.NewTestApp(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(app.Cleanup)
	blobStore, err := store.NewFSStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return app, sites.NewService(app, blobStore, sites.ServiceConfig{})
}

func mustOwner(t testing.TB, app core.App) *core.Record {
	t.Helper()
	col, _ := app.FindCollectionByNameOrId("users")
	u := core.NewRecord(col)
	u.SetEmail("owner@example.com")
	u.SetRandomPassword()
	u.Set("plan", "free")
	if err := app.Save(u); err != nil {
		t.Fatal(err)
	}
	return u
}

func files(kv ...string) sites.Upload {
	up := sites.Upload{StorageType: sites.StorageFiles}
	for i := 0; i < len(kv); i += 2 {
		up.Files = append(up.Files, sites.File{Path: kv[i], ContentType: sites.ContentTypeFor(kv[i], []byte(kv[i+1])), Data: []byte(kv[i+1])})
	}
	return up
}

func blobCount(t *testing.T, svc *sites.Service) int {
	t.Helper()
	n := 0
	if err := svc.Store().Walk(context.Background(), func(string, time.Time) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestRedeployWritesOnlyChangedBlobs(t *testing.T) {
	app, svc := newService(t)
	owner := mustOwner(t, app)
	ctx := context.Background()
	c, err := svc.Create(ctx, sites.CreateParams{Owner: owner, Slug: "dedup-site",
		Upload: files("a.css", "a{}", "b.css", "b{}", "c.js", "c()", "same.txt", "x", "same2.txt", "x")})
	if err != nil {
		t.Fatal(err)
	}
	if n := blobCount(t, svc); n != 4 {
		t.Fatalf("%d blobs, want 4 (identical files stored once)", n)
	}
	if _, err := svc.Replace(ctx, c.Record, sites.Metadata{},
		files("a.css", "a{}", "b.css", "b{ changed }", "c.js", "c()", "same.txt", "x", "same2.txt", "x")); err != nil {
		t.Fatal(err)
	}
	if n := blobCount(t, svc); n != 5 {
		t.Fatalf("%d blobs after changing one file, want 5", n)
	}
}

func TestVersionsArePrunedAndCollected(t *testing.T) {
	app, svc := newService(t)
	owner := mustOwner(t, app)
	ctx := context.Background()
	c, err := svc.Create(ctx, sites.CreateParams{Owner: owner, Slug: "many-versions", Upload: files("v.txt", "v1")})
	if err != nil {
		t.Fatal(err)
	}
	rec := c.Record
	for i := 2; i <= 12; i++ {
		if rec, err = svc.Replace(ctx, rec, sites.Metadata{}, files("v.txt", "v"+strings.Repeat("!", i))); err != nil {
			t.Fatal(err)
		}
	}
	vers, err := app.FindRecordsByFilter("versions", "deployment = {:d}", "number", 0, 0, dbx.Params{"d": rec.Id})
	if err != nil {
		t.Fatal(err)
	}
	if len(vers) != 10 || vers[0].GetInt("number") != 3 || vers[9].GetInt("number") != 12 {
		t.Fatalf("kept %d versions from %d", len(vers), vers[0].GetInt("number"))
	}
	if rec.GetString("live_version") != vers[9].Id {
		t.Fatal("live version is not the newest")
	}
	if n := blobCount(t, svc); n != 12 {
		t.Fatalf("%d blobs before collection", n)
	}
	res, err := svc.CollectGarbage(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Removed != 2 || blobCount(t, svc) != 10 {
		t.Fatalf("collected %d, left %d; want 2 and 10", res.Removed, blobCount(t, svc))
	}
	site, err := svc.LoadSite("many-versions")
	if err != nil || site.Files["v.txt"].Size != int64(len("v")+12) {
		t.Fatalf("live site after collection: %+v %v", site, err)
	}
}

func TestGraceProtectsFreshBlobs(t *testing.T) {
	_, svc := newService(t)
	ctx := context.Background()
	data := []byte("orphan")
	if err := svc.Store().Put(ctx, store.HashBytes(data), data); err != nil {
		t.Fatal(err)
	}
	if res, _ := svc.CollectGarbage(ctx, time.Hour); res.Removed != 0 || res.Deferred != 1 {
		t.Fatalf("a blob younger than the grace period: %+v, want deferred", res)
	}
	if res, _ := svc.CollectGarbage(ctx, 0); res.Removed != 1 || res.Deferred != 0 {
		t.Fatalf("an old orphan: %+v, want removed", res)
	}
}

func TestMetadataIsAppliedToHTMLOnly(t *testing.T) {
	app, svc := newService(t)
	owner := mustOwner(t, app)
	title := "My <Site>"
	desc := "About it"
	icon := "🚀"
	c, err := svc.Create(context.Background(), sites.CreateParams{Owner: owner, Slug: "meta-site",
		Meta:   sites.Metadata{Title: &title, Description: &desc, Favicon: &icon},
		Upload: files("index.html", "<html><head></head><body>x</body></html>", "notes.txt", "<head></head>")})
	if err != nil {
		t.Fatal(err)
	}
	site, _ := svc.LoadSite("meta-site")
	read := func(p string) string {
		b, err := svc.Store().Open(context.Background(), site.Files[p].Hash)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		buf := make([]byte, b.Size())
		b.Read(buf)
		return string(buf)
	}
	html := read("index.html")
	for _, want := range []string{"<title>My &lt;Site&gt;</title>", `<meta name="description" content="About it">`, `rel="icon"`} {
		if !strings.Contains(html, want) {
			t.Errorf("index.html lacks %s: %s", want, html)
		}
	}
	if got := read("notes.txt"); got != "<head></head>" {
		t.Errorf("a text file was changed: %q", got)
	}
	if c.Record.GetString("title") != title {
		t.Error("title not stored")
	}
}

// TestConcurrentReplacesKeepEachOthersMetadata: two PUTs that each change
// one field, at once, both take effect.
func TestConcurrentReplacesKeepEachOthersMetadata(t *testing.T) {
	app, svc := newService(t)
	owner := mustOwner(t, app)
	ctx := context.Background()
	c, err := svc.Create(ctx, sites.CreateParams{Owner: owner, Slug: "busy-site", Upload: files("index.html", "v1")})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		title, desc := "title "+strings.Repeat("!", i), "description "+strings.Repeat("!", i)
		var wg sync.WaitGroup
		for _, m := range []sites.Metadata{{Title: &title}, {Description: &desc}} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := svc.Replace(ctx, c.Record, m, files("index.html", "v2")); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		rec, _ := app.FindRecordById("deployments", c.Record.Id)
		if rec.GetString("title") != title || rec.GetString("description") != desc {
			t.Fatalf("round %d: title %q description %q", i, rec.GetString("title"), rec.GetString("description"))
		}
	}
}

// TestRedeployReusesVariants: a redeploy of 1000 files that changes one
// writes that file's blob and its variants only, and takes the other
// variants from the live version; variants the collector removed are made
// again.
func TestRedeployReusesVariants(t *testing.T) {
	app, svc := newService(t)
	owner := mustOwner(t, app)
	ctx := context.Background()
	var kv []string
	for i := range 1000 {
		kv = append(kv, "p/f"+strings.Repeat("0", 4-len(itoa(i)))+itoa(i)+".html",
			"<p>"+itoa(i)+" "+strings.Repeat("compressible words, again and again. ", 20)+"</p>")
	}
	c, err := svc.Create(ctx, sites.CreateParams{Owner: owner, Slug: "many-files", Upload: files(kv...)})
	if err != nil {
		t.Fatal(err)
	}
	before := blobCount(t, svc)
	if before != 3000 {
		t.Fatalf("%d blobs, want 3000 (each file with br and gzip; no zstd)", before)
	}
	kv[1] = "<p>changed " + strings.Repeat("compressible words, again and again. ", 20) + "</p>"
	rec, err := svc.Replace(ctx, c.Record, sites.Metadata{}, files(kv...))
	if err != nil {
		t.Fatal(err)
	}
	if n := blobCount(t, svc); n != before+3 {
		t.Fatalf("%d blobs after changing one file, want %d", n, before+3)
	}

	// The collector removes the first version's blobs once it is pruned;
	// here: delete one variant blob of a live file behind the store's back.
	m := liveManifest(t, app, rec)
	gone := m["p/f0002.html"].Encoded["br"].Hash
	if err := svc.Store().Delete(ctx, gone); err != nil {
		t.Fatal(err)
	}
	rec, err = svc.Replace(ctx, rec, sites.Metadata{}, files(kv...))
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := svc.Store().Has(ctx, liveManifest(t, app, rec)["p/f0002.html"].Encoded["br"].Hash); !ok {
		t.Fatal("a variant missing from the store was reused, not made again")
	}
}

func liveManifest(t *testing.T, app core.App, dep *core.Record) sites.Manifest {
	t.Helper()
	ver, err := app.FindRecordById(sites.VersionsCollection, dep.GetString("live_version"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := sites.ParseManifest([]byte(ver.GetString("manifest")))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func itoa(i int) string { return strconv.Itoa(i) }
