package sites_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/pocketbase/dbx"

	"sitedrop/sites"
)

// TestCheckSlotCountsTheOwnersOtherSites pins what the slot check counts
// (the owner index alone, capped at the limit, the record itself left
// out): an owner at the plan's limit is refused a new site; a record that
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

	// over the limit (a plan lowered): still refused, the count capped
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
