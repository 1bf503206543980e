package statsdb

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tests"

	_ "sitedrop/migrations"
	"sitedrop/sites"
	"sitedrop/sites/analytics"
)

// newApp is a test app with sitedrop's schema.
func newApp(t testing.TB) *tests.TestApp {
	t.Helper()
	app, err := tests.NewTestApp(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(app.Cleanup)
	return app
}

// mustDeployment stores a deployment of a new account.
func mustDeployment(t testing.TB, app core.App, slug string) *core.Record {
	t.Helper()
	users, err := app.FindCollectionByNameOrId("users")
	if err != nil {
		t.Fatal(err)
	}
	u := core.NewRecord(users)
	u.SetEmail(slug + "@example.com")
	u.SetRandomPassword()
	if err := app.Save(u); err != nil {
		t.Fatal(err)
	}
	col, err := app.FindCollectionByNameOrId(sites.DeploymentsCollection)
	if err != nil {
		t.Fatal(err)
	}
	rec := core.NewRecord(col)
	rec.Set("slug", slug)
	rec.Set("owner", u.Id)
	rec.Set("status", sites.StatusActive)
	rec.Set("storage_type", sites.StorageHTML)
	if err := app.Save(rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

// statsRow is the row of a deployment and date, or nil; a failed query
// fails the test (it is no missing row).
func statsRow(t *testing.T, app core.App, dep, date string) *Row {
	t.Helper()
	row, err := FindRow(app, dep, date)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	} else if err != nil {
		t.Fatal(err)
	}
	return row
}

func TestPurgeAndCascade(t *testing.T) {
	app := newApp(t)
	dep := mustDeployment(t, app, "stats")
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	for _, date := range []string{"2025-04-26", "2025-04-27", "2026-05-31"} { // 401, 400 and 1 day old
		r, err := NewRow(app)
		if err != nil {
			t.Fatal(err)
		}
		r.SetDeployment(dep.Id)
		r.SetDate(date)
		r.SetPageViews(1)
		if err := app.Save(r); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := Purge(app, now); err != nil || n != 1 {
		t.Fatalf("purged %d (%v), want the one row older than 400 days", n, err)
	}
	if statsRow(t, app, dep.Id, "2025-04-26") != nil || statsRow(t, app, dep.Id, "2025-04-27") == nil {
		t.Fatal("purged the wrong rows")
	}
	if err := app.Delete(dep); err != nil {
		t.Fatal(err)
	}
	if n, err := app.CountRecords(CollectionName); err != nil || n != 0 {
		t.Fatalf("%d rows outlived their deployment (%v)", n, err)
	}
}

func TestWorstListFitsItsField(t *testing.T) {
	app := newApp(t)
	col, err := app.FindCollectionByNameOrId(CollectionName)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{fieldTopPages, fieldReferrers, fieldNotFoundPaths} {
		f, ok := col.Fields.GetByName(name).(*core.JSONField)
		if !ok || int64(ListMaxJSON) > f.MaxSize {
			t.Fatalf("%s holds %d bytes; its list can take %d", name, f.MaxSize, ListMaxJSON)
		}
	}
	// The worst list indeed: every key byte written as \ufffd, counts of
	// 19 digits. It is written, and within the bound.
	dep := mustDeployment(t, app, "stats")
	var worst []analytics.Count
	for i := range TopLimit + 50 {
		worst = append(worst, analytics.Count{Key: fmt.Sprintf("%03d", i) + strings.Repeat("\xff", analytics.MaxKeyLen), Count: 1e18})
	}
	day := analytics.Day{Site: dep.Id, Date: time.Now().UTC().Truncate(24 * time.Hour), NotFound: 1, NotFoundPaths: worst}
	if err := SaveDay(app, day); err != nil {
		t.Fatal(err)
	}
	row := statsRow(t, app, dep.Id, day.Date.Format(time.DateOnly))
	if n := len(row.GetString(fieldNotFoundPaths)); n > ListMaxJSON || n < ListMaxJSON*9/10 {
		t.Fatalf("the worst list took %d bytes, the bound is %d", n, ListMaxJSON)
	}
}

func TestParsePeriod(t *testing.T) {
	now := time.Date(2026, 3, 31, 23, 0, 0, 0, time.UTC)
	from, to, err := ParsePeriod("", "", now)
	if err != nil || from.Format(time.DateOnly) != "2026-03-02" || to.Format(time.DateOnly) != "2026-03-31" {
		t.Fatalf("default period %v..%v (%v), want the 30 days to today", from, to, err)
	}
	if _, _, err := ParsePeriod("2025-02-25", "2026-03-31", now); err != nil {
		t.Fatalf("400 days refused: %v", err)
	}
	if _, _, err := ParsePeriod("2025-02-24", "2026-03-31", now); !errors.Is(err, ErrPeriodRange) {
		t.Fatalf("401 days: %v", err)
	}
}
