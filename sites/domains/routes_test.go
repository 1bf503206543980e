package domains_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"sitedrop/sites/domains"
)

// TestReleased: a domain released (its record deleted, or renamed by an
// update) is one that may no longer have a certificate, unless another
// deployment has it verified.
func TestReleased(t *testing.T) {
	t.Parallel()
	app := newApp(t)
	user := mustUser(t, app, "a@example.com")
	a := mustDeployment(t, app, "alpha", user.Id)
	table := domains.NewTable(app)
	rec, err := domains.Add(context.Background(), app, a.Id, "shop.example.com")
	if err != nil {
		t.Fatal(err)
	}
	if rec, err = domains.Result(app, rec, nil, time.Now().UTC()); err != nil {
		t.Fatal(err)
	}
	table.Invalidate()
	if got := table.Released(rec.Record); len(got) != 0 {
		t.Fatalf("a verified domain released: %v", got)
	}
	if err := app.Delete(rec); err != nil {
		t.Fatal(err)
	}
	table.Invalidate()
	if got := table.Released(rec.Record); !slices.Equal(got, []string{"shop.example.com"}) {
		t.Fatalf("deleted domain: Released = %v", got)
	}
}
