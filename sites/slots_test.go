package sites_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
)

// TestCheckSlotCountsTheOwnersOtherSites pins what the slot check counts
// (the owner's deployments, the record itself left out): an owner at the plan's limit is refused a new site; a record that
// the database already gives the owner (a stale claim) is not counted
// against itself; an owner over the limit is refused.
func TestCheckSlotCountsTheOwnersOtherSites(t *testing.T) {
	app, svc := newService(t)
	owner := mustOwner(t, app) // free: sites.DefaultFreeSlots
	ctx := context.Background()
	deploy := func(p sites.CreateParams) (*sites.Created, error) {
		p.Upload = files("index.html", "<p>"+p.Slug+"</p>")
		return svc.Create(ctx, p)
	}
	anon, err := deploy(sites.CreateParams{Slug: "anon-site", AnonTTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	slugs := []string{"one-site", "two-site", "three-site", "four-site"}
	for _, slug := range slugs[:sites.DefaultFreeSlots-1] {
		if _, err := deploy(sites.CreateParams{Owner: owner, Slug: slug}); err != nil {
			t.Fatalf("%s: %v", slug, err)
		}
	}

	// a claim of the anonymous site, loaded before the database gave it
	// to the owner: the owner's others are 4 of 5, it fits
	claimed, err := app.FindRecordById(sites.DeploymentsCollection, anon.Record.Id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := app.DB().Update(sites.DeploymentsCollection, dbx.Params{sites.FieldOwner: owner.Id}, dbx.HashExp{"id": claimed.Id}).Execute(); err != nil {
		t.Fatal(err)
	}
	claimed.Set(sites.FieldOwner, owner.Id)
	if err := svc.CheckSlot(app, claimed); err != nil {
		t.Fatalf("the record counted against itself: %v", err)
	}

	// five now: a sixth is refused, before and in the transaction
	if _, err := deploy(sites.CreateParams{Owner: owner, Slug: "six-site"}); !errors.Is(err, sites.ErrSlotLimit) {
		t.Fatalf("sixth site: %v, want ErrSlotLimit", err)
	}
	if err := svc.PrecheckCreate(owner, ""); !errors.Is(err, sites.ErrSlotLimit) {
		t.Fatalf("precheck at the limit: %v, want ErrSlotLimit", err)
	}

	// over the limit (a plan lowered): still refused
	for _, slug := range []string{"extra-one", "extra-two"} {
		c, err := deploy(sites.CreateParams{Slug: slug, AnonTTL: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := app.DB().Update(sites.DeploymentsCollection, dbx.Params{sites.FieldOwner: owner.Id}, dbx.HashExp{"id": c.Record.Id}).Execute(); err != nil {
			t.Fatal(err)
		}
	}
	if err := svc.PrecheckCreate(owner, ""); !errors.Is(err, sites.ErrSlotLimit) {
		t.Fatalf("precheck over the limit: %v, want ErrSlotLimit", err)
	}
}

// slotCounts reads the slot counts table (sites.slotCountsTable), leaving
// out the rows at zero, and what the deployments table says they should
// be, by owner.
func slotCounts(t *testing.T, app core.App) (kept, counted map[string]int) {
	t.Helper()
	read := func(q string) map[string]int {
		var rows []struct {
			Owner string `db:"owner"`
			N     int    `db:"n"`
		}
		if err := app.DB().NewQuery(q).All(&rows); err != nil {
			t.Fatal(err)
		}
		m := map[string]int{}
		for _, r := range rows {
			m[r.Owner] = r.N
		}
		return m
	}
	return read("SELECT owner, n FROM _sitedrop_slots WHERE n != 0"),
		read("SELECT owner, COUNT(*) AS n FROM deployments WHERE owner != '' GROUP BY owner")
}

// TestSlotCountsFollowEveryWriter: the slot counts the checks read are
// kept by triggers, so every way a deployment is made, given, taken or
// removed moves them: the service, a record save (the dashboard's), plain
// SQL (the jobs'), a deletion and an account's deletion with its sites
// (the cascade). After each step the counts are the deployments table's.
func TestSlotCountsFollowEveryWriter(t *testing.T) {
	app, svc := newService(t)
	ctx := context.Background()
	ann := mustOwnerEmail(t, app, "ann@example.com")
	ben := mustOwnerEmail(t, app, "ben@example.com")
	deploy := func(owner *core.Record, slug string) *core.Record {
		t.Helper()
		p := sites.CreateParams{Owner: owner, Slug: slug, Upload: files("index.html", "<p>"+slug+"</p>")}
		if owner == nil {
			p.AnonTTL = time.Hour
		}
		c, err := svc.Create(ctx, p)
		if err != nil {
			t.Fatalf("%s: %v", slug, err)
		}
		return c.Record
	}
	sql := func(q string, params dbx.Params) {
		t.Helper()
		if _, err := app.DB().NewQuery(q).Bind(params).Execute(); err != nil {
			t.Fatal(err)
		}
	}
	var anon, annTwo *core.Record
	for _, step := range []struct {
		what string
		do   func()
		want map[string]int // by owner id
	}{
		{"ann deploys two, ben one, and one anonymous", func() {
			deploy(ann, "ann-one")
			annTwo = deploy(ann, "ann-two")
			deploy(ben, "ben-one")
			anon = deploy(nil, "anon-one")
		}, map[string]int{ann.Id: 2, ben.Id: 1}},
		{"ben claims the anonymous one (a record save)", func() {
			rec, err := app.FindRecordById(sites.DeploymentsCollection, anon.Id)
			if err != nil {
				t.Fatal(err)
			}
			rec.Set(sites.FieldOwner, ben.Id)
			if err := app.Save(rec); err != nil {
				t.Fatal(err)
			}
		}, map[string]int{ann.Id: 2, ben.Id: 2}},
		{"ann's second is given to ben in plain SQL", func() {
			sql("UPDATE deployments SET owner = {:to} WHERE id = {:id}", dbx.Params{"to": ben.Id, "id": annTwo.Id})
		}, map[string]int{ann.Id: 1, ben.Id: 3}},
		{"the claimed one loses its owner", func() {
			sql("UPDATE deployments SET owner = '' WHERE id = {:id}", dbx.Params{"id": anon.Id})
		}, map[string]int{ann.Id: 1, ben.Id: 2}},
		{"an update that leaves the owner alone", func() {
			sql("UPDATE deployments SET owner = owner, slug = slug || '-x' WHERE owner = {:o}", dbx.Params{"o": ben.Id})
		}, map[string]int{ann.Id: 1, ben.Id: 2}},
		{"ann's site is deleted (a record delete)", func() {
			rec, err := app.FindFirstRecordByData(sites.DeploymentsCollection, sites.FieldSlug, "ann-one")
			if err != nil {
				t.Fatal(err)
			}
			if err := app.Delete(rec); err != nil {
				t.Fatal(err)
			}
		}, map[string]int{ben.Id: 2}},
		{"one of ben's is deleted in plain SQL", func() {
			sql("DELETE FROM deployments WHERE id = {:id}", dbx.Params{"id": annTwo.Id})
		}, map[string]int{ben.Id: 1}},
		{"ann deploys again", func() { deploy(ann, "ann-three") }, map[string]int{ann.Id: 1, ben.Id: 1}},
		{"ben's account is deleted, his sites with it", func() {
			if err := app.Delete(ben); err != nil {
				t.Fatal(err)
			}
		}, map[string]int{ann.Id: 1}},
	} {
		step.do()
		kept, counted := slotCounts(t, app)
		if !maps.Equal(kept, counted) || !maps.Equal(kept, step.want) {
			t.Fatalf("after %s: kept %v, deployments table %v, want %v", step.what, kept, counted, step.want)
		}
	}
	var rows int
	if err := app.DB().NewQuery("SELECT COUNT(*) FROM _sitedrop_slots WHERE owner = {:o}").Bind(dbx.Params{"o": ben.Id}).Row(&rows); err != nil || rows != 0 {
		t.Fatalf("a deleted account's row: %d (%v), want none", rows, err)
	}
	if n, err := svc.CountOwned(ann.Id); err != nil || n != 1 {
		t.Fatalf("CountOwned(ann) = %d, %v; want 1", n, err)
	}
}

// TestSlotCountsMigrationCountsExistingSites: the migration that brings
// the counts fills them from the deployments already there.
func TestSlotCountsMigrationCountsExistingSites(t *testing.T) {
	app, svc := newService(t)
	ann := mustOwnerEmail(t, app, "ann@example.com")
	for _, slug := range []string{"ann-one", "ann-two", "ann-three"} {
		if _, err := svc.Create(context.Background(), sites.CreateParams{Owner: ann, Slug: slug, Upload: files("index.html", "x")}); err != nil {
			t.Fatal(err)
		}
	}
	i := slices.IndexFunc(core.AppMigrations.Items(), func(m *core.Migration) bool { return strings.HasSuffix(m.File, "_slot_counts.go") })
	if i < 0 {
		t.Fatal("no slot counts migration")
	}
	m := core.AppMigrations.Items()[i]
	if err := m.Down(app); err != nil {
		t.Fatal(err)
	}
	if app.HasTable("_sitedrop_slots") {
		t.Fatal("down left the table")
	}
	if err := m.Up(app); err != nil {
		t.Fatal(err)
	}
	if kept, _ := slotCounts(t, app); !maps.Equal(kept, map[string]int{ann.Id: 3}) {
		t.Fatalf("counts after the migration: %v, want ann's 3", kept)
	}
}
