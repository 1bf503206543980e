package sites_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
	"sitedrop/sites/store"
)

// refreshCountingStore counts the questions that refresh a blob's age
// (Has) apart from those that only look (Exists), and can act after each
// look (onLook, with the hash looked for) and before each Has (onHas).
type refreshCountingStore struct {
	*store.FSStore
	has, looks atomic.Int64
	onLook     func(h string)
	onHas      func(h string)
}

func (c *refreshCountingStore) Has(ctx context.Context, h string) (bool, error) {
	c.has.Add(1)
	if c.onHas != nil {
		c.onHas(h)
	}
	return c.FSStore.Has(ctx, h)
}

func (c *refreshCountingStore) Exists(ctx context.Context, h string) (bool, error) {
	c.looks.Add(1)
	ok, err := c.FSStore.Exists(ctx, h)
	if c.onLook != nil {
		c.onLook(h)
	}
	return ok, err
}

func newCountingService(t *testing.T) (core.App, *sites.Service, *refreshCountingStore) {
	t.Helper()
	app, _ := newService(t)
	fs, err := store.NewFSStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	st := &refreshCountingStore{FSStore: fs}
	return app, sites.NewService(app, st, sites.ServiceConfig{}), st
}

// bigFiles is a site whose files are large enough for variants.
func bigFiles() sites.Upload {
	return files("index.html", "<!doctype html><title>t</title><p>"+strings.Repeat("hello world ", 100)+"</p>",
		"a.css", "p{color:red}"+strings.Repeat(" .x{margin:0}", 80),
		"b.js", "console.log(1);"+strings.Repeat(" var x = 1;", 80))
}

// TestUnchangedRedeployRefreshesNothingTheLiveVersionNames: an unchanged
// redeploy refreshes the age of no blob the live version names (the
// collector spares them). It asks the store nothing when this process
// saw all of them present and nothing was deleted from the store since
// (verifiedVersions); after a deletion it looks for each (a stat).
func TestUnchangedRedeployRefreshesNothingTheLiveVersionNames(t *testing.T) {
	app, svc, st := newCountingService(t)
	ctx := context.Background()
	owner := mustOwner(t, app)
	c, err := svc.Create(ctx, sites.CreateParams{Owner: owner, Slug: "same-site", Upload: bigFiles()})
	if err != nil {
		t.Fatal(err)
	}
	for _, deleted := range []bool{true, false} {
		if deleted { // a blob no version names: the count moves
			if err := st.Delete(ctx, store.HashBytes([]byte("unrelated"))); err != nil {
				t.Fatal(err)
			}
		}
		st.has.Store(0)
		st.looks.Store(0)
		if _, err := svc.Replace(ctx, c.Record, sites.Metadata{}, bigFiles()); err != nil {
			t.Fatal(err)
		}
		if n := st.has.Load(); n != 0 {
			t.Errorf("an unchanged redeploy refreshed %d blobs the live version names", n)
		}
		switch n := st.looks.Load(); {
		case deleted && n < 6: // three files and their variants
			t.Errorf("after a deletion from the store, looked for %d blobs", n)
		case !deleted && n != 0:
			t.Errorf("with every blob seen present and no deletion since, looked for %d blobs", n)
		}
	}
}

// TestRedeployRefreshesWhenTheLiveVersionGoes: when the live version is
// deleted during a redeploy (from the dashboard), the blobs counted
// present without a refresh (looked for, or known present: sure) are
// asked about again (Has) before the commit: the redeploy commits when
// they are all there, and fails, committing nothing, when one went.
func TestRedeployRefreshesWhenTheLiveVersionGoes(t *testing.T) {
	for _, sure := range []bool{false, true} {
		for _, lose := range []bool{false, true} {
			name := "blobs kept"
			if lose {
				name = "a blob collected"
			}
			if sure {
				name += ", known present"
			}
			t.Run(name, func(t *testing.T) {
				app, svc, st := newCountingService(t)
				ctx := context.Background()
				owner := mustOwner(t, app)
				c, err := svc.Create(ctx, sites.CreateParams{Owner: owner, Slug: "gone-site", Upload: bigFiles()})
				if err != nil {
					t.Fatal(err)
				}
				// a variant: the redeploy does not have its bytes
				target := liveManifest(t, app, c.Record)["a.css"].Encoded[sites.EncodingGzip].Hash
				if target == "" {
					t.Fatal("a.css has no gzip variant")
				}
				var once sync.Once
				gone := func() { // found, then gone: the version, and the blob if lose
					once.Do(func() {
						if err := app.Delete(c.Version); err != nil {
							t.Error(err)
						}
						if lose {
							if err := st.FSStore.Delete(ctx, target); err != nil {
								t.Error(err)
							}
						}
					})
				}
				up := bigFiles()
				if sure {
					// nothing is looked for: the version goes while the
					// new file is asked about
					up.Files = append(up.Files, sites.File{Path: "new.txt", ContentType: "text/plain", Data: []byte("new")})
					fresh := store.HashBytes([]byte("new"))
					st.onHas = func(h string) {
						if h == fresh {
							gone()
						}
					}
				} else {
					if err := st.Delete(ctx, store.HashBytes([]byte("unrelated"))); err != nil {
						t.Fatal(err) // the deletion count moves: each blob is looked for
					}
					st.onLook = func(h string) {
						if h == target {
							gone()
						}
					}
				}
				st.has.Store(0)
				_, err = svc.Replace(ctx, c.Record, sites.Metadata{}, up)
				if lose {
					if err == nil || !strings.Contains(err.Error(), "collected during the deploy") {
						t.Fatalf("a blob gone: %v", err)
					}
					dep, _ := app.FindRecordById(sites.DeploymentsCollection, c.Record.Id)
					if dep.GetString(sites.FieldLiveVersion) != c.Version.Id {
						t.Fatal("a failed redeploy committed")
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if st.has.Load() <= 1 { // the new file's, when sure
					t.Error("the blobs were not asked about again once their version went")
				}
			})
		}
	}
}

// TestFirstDeployAsksOnlyAboutItsFiles: the store is asked about a
// deploy's files (and the bytes sent, when changed), not about the
// variants of a file it lacks, which it lacks too; the variants are
// written all the same.
func TestFirstDeployAsksOnlyAboutItsFiles(t *testing.T) {
	app, svc, st := newCountingService(t)
	ctx := context.Background()
	owner := mustOwner(t, app)
	c, err := svc.Create(ctx, sites.CreateParams{Owner: owner, Slug: "first-site", Upload: bigFiles()})
	if err != nil {
		t.Fatal(err)
	}
	files, variants := map[string]bool{}, 0
	for _, e := range liveManifest(t, app, c.Record) {
		files[e.Hash] = true
		if e.Source != "" {
			files[e.Source] = true
		}
		for _, v := range e.Encoded {
			variants++
			if ok, err := st.FSStore.Exists(ctx, v.Hash); err != nil || !ok {
				t.Errorf("variant %s not stored (%v)", v.Hash, err)
			}
		}
	}
	if variants < 6 {
		t.Fatalf("%d variants: the site should have some", variants)
	}
	if n := st.has.Load(); n != int64(len(files)) {
		t.Errorf("asked the store about %d blobs, want %d (the files, not their %d variants)", n, len(files), variants)
	}
}

// TestRedeployLooksAgainAfterTheLiveManifestIsEdited: a live version
// whose manifest was edited in place (from the dashboard) after this
// process saw its blobs present is not trusted: a blob the edit names
// is looked for, and written when the store lacks it.
func TestRedeployLooksAgainAfterTheLiveManifestIsEdited(t *testing.T) {
	app, svc, st := newCountingService(t)
	ctx := context.Background()
	owner := mustOwner(t, app)
	c, err := svc.Create(ctx, sites.CreateParams{Owner: owner, Slug: "edited-site", Upload: bigFiles()})
	if err != nil {
		t.Fatal(err)
	}
	extra := []byte("named by the edit, never stored")
	h := store.HashBytes(extra)
	m := liveManifest(t, app, c.Record)
	m["extra.txt"] = sites.ManifestEntry{Hash: h, Size: int64(len(extra)), Type: "text/plain; charset=utf-8"}
	ver, err := app.FindRecordById(sites.VersionsCollection, c.Version.Id)
	if err != nil {
		t.Fatal(err)
	}
	ver.Set(sites.FieldVersionManifest, m)
	if err := app.Save(ver); err != nil {
		t.Fatal(err)
	}
	up := bigFiles()
	up.Files = append(up.Files, sites.File{Path: "extra.txt", ContentType: "text/plain; charset=utf-8", Data: extra})
	if _, err := svc.Replace(ctx, c.Record, sites.Metadata{}, up); err != nil {
		t.Fatal(err)
	}
	if ok, err := st.FSStore.Exists(ctx, h); err != nil || !ok {
		t.Fatalf("a file the edited live manifest named, never stored, is missing after the redeploy (%v)", err)
	}
}
