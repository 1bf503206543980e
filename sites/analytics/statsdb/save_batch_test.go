package statsdb

import (
	"context"
	"fmt"
	"testing"
	"time"

	"sitedrop/sites/analytics"
)

// testDays is a day for each of deps on each of n dates from first, one
// page view each.
func testDays(deps []string, first time.Time, n int) []analytics.Day {
	var days []analytics.Day
	for i := range n {
		for _, dep := range deps {
			days = append(days, analytics.Day{Site: dep, Date: first.AddDate(0, 0, i), PageViews: 1, Visitors: 1,
				Pages: []analytics.Count{{Key: "/", Count: 1}}})
		}
	}
	return days
}

// TestSaveDaysBatches writes more days than a batch holds: every day of a
// live deployment reaches its row (added to a row already stored), the
// days of a deleted one are dropped, and none is reported failed.
func TestSaveDaysBatches(t *testing.T) {
	app := newApp(t)
	a, b, gone := mustDeployment(t, app, "site-a"), mustDeployment(t, app, "site-b"), mustDeployment(t, app, "gone")
	first := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	stored, err := NewRow(app)
	if err != nil {
		t.Fatal(err)
	}
	stored.SetDeployment(a.Id)
	stored.SetDate("2026-01-01")
	stored.SetPageViews(5)
	if err := app.Save(stored); err != nil {
		t.Fatal(err)
	}
	if err := app.Delete(gone); err != nil {
		t.Fatal(err)
	}
	const dates = SaveBatch/3 + 20 // three sites: more than one batch
	days := testDays([]string{a.Id, gone.Id, b.Id}, first, dates)
	failed, rest, err := SaveDays(context.Background(), app, days)
	if len(failed) != 0 || len(rest) != 0 || err != nil {
		t.Fatalf("failed %d, rest %d, %v; want every day written", len(failed), len(rest), err)
	}
	if r := statsRow(t, app, a.Id, "2026-01-01"); r == nil || r.PageViews() != 6 {
		t.Fatalf("the stored row was not added to: %v", r)
	}
	last := first.AddDate(0, 0, dates-1).Format(time.DateOnly)
	if r := statsRow(t, app, b.Id, last); r == nil || r.PageViews() != 1 || len(r.list(fieldTopPages)) != 1 {
		t.Fatalf("the last batch's row: %v", r)
	}
	if n, err := app.CountRecords(CollectionName); err != nil || n != 2*dates {
		t.Fatalf("%d rows (%v), want %d: the deleted deployment's days dropped, no other missing", n, err, 2*dates)
	}
}

// TestSaveDaysStopsWithItsContext: with no time left, nothing is written
// and every day comes back to be written later.
func TestSaveDaysStopsWithItsContext(t *testing.T) {
	app := newApp(t)
	a := mustDeployment(t, app, "site-a")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	days := testDays([]string{a.Id}, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), 3)
	failed, rest, _ := SaveDays(ctx, app, days)
	if len(failed) != 0 || len(rest) != 3 {
		t.Fatalf("failed %d, rest %d; want all 3 left", len(failed), len(rest))
	}
	if n, _ := app.CountRecords(CollectionName); n != 0 {
		t.Fatalf("%d rows written with no time left", n)
	}
}

// BenchmarkSaveDays writes a minute's flush of 500 site-days (rows
// already stored: the common case), batched or one transaction a day.
func BenchmarkSaveDays(b *testing.B) {
	app := newApp(b)
	var deps []string
	for i := range 50 {
		deps = append(deps, mustDeployment(b, app, fmt.Sprintf("site-%c%c", 'a'+i/26, 'a'+i%26)).Id)
	}
	days := testDays(deps, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), 10)
	b.Run("batched", func(b *testing.B) {
		for b.Loop() {
			if failed, _, err := SaveDays(context.Background(), app, days); len(failed) > 0 {
				b.Fatal(err)
			}
		}
	})
	b.Run("a transaction a day", func(b *testing.B) {
		for b.Loop() {
			for _, d := range days {
				if err := SaveDay(app, d); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
