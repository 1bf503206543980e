package sites_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
	"sitedrop/sites/store"
)

// draft and alias are Uploads published as a draft, under an alias.
func withRelease(up sites.Upload, rel sites.Release) sites.Upload {
	up.Release = rel
	return up
}

func replaceVersion(t *testing.T, svc *sites.Service, rec *core.Record, up sites.Upload) (*core.Record, int) {
	t.Helper()
	rec, ver, err := svc.ReplaceVersion(context.Background(), rec, sites.Metadata{}, up)
	if err != nil {
		t.Fatal(err)
	}
	return rec, ver.GetInt(sites.FieldVersionNumber)
}

func liveText(t *testing.T, app core.App, svc *sites.Service, slug, path string) string {
	t.Helper()
	site, err := svc.LoadSite(slug)
	if err != nil {
		t.Fatal(err)
	}
	e, ok := site.Files[path]
	if !ok {
		return ""
	}
	r, err := svc.Store().Open(context.Background(), e.Hash)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b := make([]byte, r.Size())
	if _, err := r.Read(b); err != nil && r.Size() > 0 {
		t.Fatal(err)
	}
	return string(b)
}

// TestDraftIsNotLiveUntilPromoted: a draft is a kept version the site
// does not serve, with its message, and whose settings the site does not
// take; promoting it makes it live with its settings (SPA, title), and
// rolling back brings the earlier version's.
func TestDraftIsNotLiveUntilPromoted(t *testing.T) {
	app, svc := newService(t)
	owner := mustOwner(t, app)
	c, err := svc.Create(context.Background(), sites.CreateParams{Owner: owner, Slug: "draft-site", Upload: files("a.txt", "one")})
	if err != nil {
		t.Fatal(err)
	}
	spa, title := true, "Two"
	rec, ver, err := svc.ReplaceVersion(context.Background(), c.Record, sites.Metadata{IsSPA: &spa, Title: &title},
		withRelease(files("a.txt", "two"), sites.Release{Draft: true, Message: "try two"}))
	if err != nil {
		t.Fatal(err)
	}
	if got := liveText(t, app, svc, "draft-site", "a.txt"); got != "one" {
		t.Fatalf("after a draft the site serves %q", got)
	}
	if rec.GetBool(sites.FieldIsSPA) || rec.GetString(sites.FieldTitle) != "" || ver.GetInt(sites.FieldVersionNumber) != 2 || !ver.GetBool(sites.FieldVersionIsSPA) {
		t.Fatalf("draft: site SPA %v, version %d SPA %v", rec.GetBool(sites.FieldIsSPA), ver.GetInt(sites.FieldVersionNumber), ver.GetBool(sites.FieldVersionIsSPA))
	}
	vs, err := svc.ListVersions(rec)
	if err != nil || len(vs) != 2 || vs[0].Number != 2 || vs[0].Live || vs[0].Message != "try two" || !vs[1].Live {
		t.Fatalf("versions: %+v %v", vs, err)
	}
	rec, err = svc.Promote(context.Background(), rec, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got := liveText(t, app, svc, "draft-site", "a.txt"); got != "two" || !rec.GetBool(sites.FieldIsSPA) || rec.GetString(sites.FieldTitle) != "Two" {
		t.Fatalf("after promote the site serves %q, SPA %v, title %q", got, rec.GetBool(sites.FieldIsSPA), rec.GetString(sites.FieldTitle))
	}
	if rec, err = svc.Rollback(context.Background(), rec, 1); err != nil || rec.GetBool(sites.FieldIsSPA) || rec.GetString(sites.FieldTitle) != "" {
		t.Fatalf("a rollback keeps the promoted settings: %v", err)
	}
	if _, err := svc.Promote(context.Background(), rec, 9); !errors.Is(err, sites.ErrVersionNotFound) {
		t.Fatalf("promote of an unknown version: %v", err)
	}
}

// TestDraftOfANewDeployment: a deployment created as a draft serves
// nothing until its first version is promoted.
func TestDraftOfANewDeployment(t *testing.T) {
	app, svc := newService(t)
	owner := mustOwner(t, app)
	c, err := svc.Create(context.Background(), sites.CreateParams{Owner: owner, Slug: "fresh-draft",
		Upload: withRelease(files("a.txt", "one"), sites.Release{Draft: true, Alias: "staging"})})
	if err != nil {
		t.Fatal(err)
	}
	if c.Record.GetString(sites.FieldLiveVersion) != "" || c.Version.GetInt(sites.FieldVersionNumber) != 1 {
		t.Fatalf("a new draft is live: %q", c.Record.GetString(sites.FieldLiveVersion))
	}
	if got := liveText(t, app, svc, "fresh-draft", "a.txt"); got != "" {
		t.Fatalf("a new draft is served: %q", got)
	}
	if v, err := sites.FindAliasVersion(app, c.Record.Id, "staging"); err != nil || v.Id != c.Version.Id {
		t.Fatalf("alias of the new draft: %v", err)
	}
	if _, err := svc.Create(context.Background(), sites.CreateParams{Slug: "anon-draft",
		Upload: withRelease(files("a.txt", "one"), sites.Release{Draft: true})}); !isFieldError(err, "draft") {
		t.Fatalf("anonymous draft: %v", err)
	}
}

func isFieldError(err error, field string) bool {
	var fe *sites.FieldError
	return errors.As(err, &fe) && fe.Field == field
}

// TestPromoteIsAtomicUnderConcurrentReads: while versions are promoted
// back and forth, every read of the site sees one version whole: its
// files and its SPA setting together, never a mix.
func TestPromoteIsAtomicUnderConcurrentReads(t *testing.T) {
	app, svc := newService(t)
	owner := mustOwner(t, app)
	c, err := svc.Create(context.Background(), sites.CreateParams{Owner: owner, Slug: "flip-site", Upload: files("a.txt", "1", "b.txt", "1")})
	if err != nil {
		t.Fatal(err)
	}
	spa := true
	rec, _, err := svc.ReplaceVersion(context.Background(), c.Record, sites.Metadata{IsSPA: &spa},
		withRelease(files("a.txt", "2", "b.txt", "2"), sites.Release{Draft: true}))
	if err != nil {
		t.Fatal(err)
	}
	one, two := sites.Manifest{}, sites.Manifest{}
	for _, n := range []int{1, 2} {
		fs, err := svc.VersionFiles(rec, n)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fs {
			map[int]sites.Manifest{1: one, 2: two}[n][f.Path] = sites.ManifestEntry{Hash: f.Hash}
		}
	}
	var stop atomic.Bool
	var reads atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				site, err := svc.LoadSite("flip-site")
				if err != nil {
					t.Error(err)
					return
				}
				a, b := site.Files["a.txt"].Hash, site.Files["b.txt"].Hash
				isOne := a == one["a.txt"].Hash && b == one["b.txt"].Hash && !site.IsSPA
				isTwo := a == two["a.txt"].Hash && b == two["b.txt"].Hash && site.IsSPA
				if !isOne && !isTwo {
					t.Errorf("a mix: a=%s b=%s spa=%v", a, b, site.IsSPA)
					return
				}
				reads.Add(1)
			}
		}()
	}
	for i := range 40 {
		if _, err := svc.Promote(context.Background(), rec, 2-i%2); err != nil {
			t.Error(err)
			break
		}
	}
	stop.Store(true)
	wg.Wait()
	if reads.Load() == 0 {
		t.Fatal("no reads")
	}
}

// TestAliasFollowsItsDeploys: an alias points at the last version
// deployed with it, draft or live; a rollback or a promote moves the
// live pointer only; a deploy without the alias leaves it.
func TestAliasFollowsItsDeploys(t *testing.T) {
	app, svc := newService(t)
	owner := mustOwner(t, app)
	c, err := svc.Create(context.Background(), sites.CreateParams{Owner: owner, Slug: "alias-site", Upload: files("a.txt", "1")})
	if err != nil {
		t.Fatal(err)
	}
	rec := c.Record
	aliasAt := func() int {
		t.Helper()
		v, err := sites.FindAliasVersion(app, rec.Id, "staging")
		if err != nil {
			t.Fatal(err)
		}
		return v.GetInt(sites.FieldVersionNumber)
	}
	rec, _ = replaceVersion(t, svc, rec, withRelease(files("a.txt", "2"), sites.Release{Alias: "staging"}))
	if aliasAt() != 2 || liveText(t, app, svc, "alias-site", "a.txt") != "2" {
		t.Fatal("a live deploy with the alias: alias or site wrong")
	}
	rec, _ = replaceVersion(t, svc, rec, withRelease(files("a.txt", "3"), sites.Release{Alias: "staging", Draft: true}))
	if aliasAt() != 3 || liveText(t, app, svc, "alias-site", "a.txt") != "2" {
		t.Fatal("a draft with the alias: only the alias moves")
	}
	rec, _ = replaceVersion(t, svc, rec, files("a.txt", "4"))
	if aliasAt() != 3 {
		t.Fatal("a deploy without the alias moved it")
	}
	if rec, err = svc.Rollback(context.Background(), rec, 1); err != nil {
		t.Fatal(err)
	}
	if aliasAt() != 3 || liveText(t, app, svc, "alias-site", "a.txt") != "1" {
		t.Fatal("a rollback moved the alias")
	}
	as, err := svc.ListAliases(rec)
	if err != nil || len(as) != 1 || as[0] != (sites.Alias{Name: "staging", Version: 3}) {
		t.Fatalf("aliases: %+v %v", as, err)
	}
	if err := svc.DeleteAlias(rec, "staging"); err != nil {
		t.Fatal(err)
	}
	if _, err := sites.FindAliasVersion(app, rec.Id, "staging"); !errors.Is(err, sites.ErrNotFound) {
		t.Fatalf("deleted alias: %v", err)
	}
	if err := svc.DeleteAlias(rec, "staging"); !errors.Is(err, sites.ErrAliasNotFound) {
		t.Fatalf("deleting it again: %v", err)
	}
	if _, _, err := svc.ReplaceVersion(context.Background(), rec, sites.Metadata{},
		withRelease(files("a.txt", "5"), sites.Release{Alias: "v12"})); !isFieldError(err, "alias") {
		t.Fatalf("a version-shaped alias: %v", err)
	}
}

// TestPruneKeepsLiveAndAliased: pruning never deletes the live version
// (after a rollback, under drafts) nor an aliased one; of the others it
// keeps KeepVersions-1.
func TestPruneKeepsLiveAndAliased(t *testing.T) {
	app, svc := newService(t)
	blobStore, err := store.NewFSStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	svc = sites.NewService(app, blobStore, sites.ServiceConfig{KeepVersions: 3})
	owner := mustOwner(t, app)
	c, err := svc.Create(context.Background(), sites.CreateParams{Owner: owner, Slug: "prune-site",
		Upload: withRelease(files("a.txt", "1"), sites.Release{Alias: "keep"})})
	if err != nil {
		t.Fatal(err)
	}
	rec := c.Record
	for i := 2; i <= 6; i++ {
		rec, _ = replaceVersion(t, svc, rec, files("a.txt", strings.Repeat("x", i)))
	}
	kept := func() []int {
		t.Helper()
		vs, err := svc.ListVersions(rec)
		if err != nil {
			t.Fatal(err)
		}
		var ns []int
		for _, v := range vs {
			ns = append(ns, v.Number)
		}
		slices.Sort(ns)
		return ns
	}
	if got := kept(); !slices.Equal(got, []int{1, 4, 5, 6}) {
		t.Fatalf("kept %v, want the aliased 1 and 4, 5, 6", got)
	}
	if rec, err = svc.Rollback(context.Background(), rec, 4); err != nil {
		t.Fatal(err)
	}
	for i := 7; i <= 9; i++ {
		rec, _ = replaceVersion(t, svc, rec, withRelease(files("a.txt", strings.Repeat("y", i)), sites.Release{Draft: true}))
	}
	if got := kept(); !slices.Equal(got, []int{1, 4, 7, 8, 9}) {
		t.Fatalf("kept %v, want the aliased 1, the live 4 and 7, 8, 9", got)
	}
	if got := liveText(t, app, svc, "prune-site", "a.txt"); got != "xxxx" {
		t.Fatalf("the site serves %q", got)
	}
}

// TestDiffVersions: the files added, changed (other content) and removed
// between two versions, with their sizes, by path; unchanged files are
// not listed.
func TestDiffVersions(t *testing.T) {
	app, svc := newService(t)
	owner := mustOwner(t, app)
	c, err := svc.Create(context.Background(), sites.CreateParams{Owner: owner, Slug: "diff-site",
		Upload: files("same.txt", "s", "changed.txt", "old", "gone.txt", "bye!")})
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := replaceVersion(t, svc, c.Record, files("same.txt", "s", "changed.txt", "newer", "new.txt", "hello"))
	d, err := svc.DiffVersions(rec, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := sites.Diff{
		Added:   []sites.DiffEntry{{Path: "new.txt", To: 5}},
		Changed: []sites.DiffEntry{{Path: "changed.txt", From: 3, To: 5}},
		Removed: []sites.DiffEntry{{Path: "gone.txt", From: 4}},
	}
	if !slices.Equal(d.Added, want.Added) || !slices.Equal(d.Changed, want.Changed) || !slices.Equal(d.Removed, want.Removed) {
		t.Fatalf("diff %+v, want %+v", d, want)
	}
	if _, err := svc.DiffVersions(rec, 1, 3); !errors.Is(err, sites.ErrVersionNotFound) {
		t.Fatalf("diff with an unknown version: %v", err)
	}
}

// TestAliasLimit: a deployment has at most MaxAliases aliases; moving one
// it has is always allowed, and a refused deploy saves nothing.
func TestAliasLimit(t *testing.T) {
	app, svc := newService(t)
	owner := mustOwner(t, app)
	c, err := svc.Create(context.Background(), sites.CreateParams{Owner: owner, Slug: "many-aliases", Upload: files("a.txt", "0")})
	if err != nil {
		t.Fatal(err)
	}
	rec := c.Record
	for i := range sites.MaxAliases {
		rec, _ = replaceVersion(t, svc, rec, withRelease(files("a.txt", strings.Repeat("x", i+1)), sites.Release{Alias: "a" + strconv.Itoa(i), Draft: true}))
	}
	_, _, err = svc.ReplaceVersion(context.Background(), rec, sites.Metadata{}, withRelease(files("a.txt", "over"), sites.Release{Alias: "one-more"}))
	if !isFieldError(err, "alias") {
		t.Fatalf("alias %d: %v", sites.MaxAliases+1, err)
	}
	if vs, _ := svc.ListVersions(rec); len(vs) != sites.MaxAliases+1 || !vs[len(vs)-1].Live {
		t.Fatalf("a refused alias saved a version or moved the site: %d versions", len(vs))
	}
	rec, _ = replaceVersion(t, svc, rec, withRelease(files("a.txt", "moved"), sites.Release{Alias: "a0"}))
	if v, err := sites.FindAliasVersion(app, rec.Id, "a0"); err != nil || v.GetInt(sites.FieldVersionNumber) != sites.MaxAliases+2 {
		t.Fatalf("moving an alias at the limit: %v", err)
	}
}
