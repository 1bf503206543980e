package hooks

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites/analytics"
	"sitedrop/sites/analytics/statsdb"
)

// visit fetches path from the site slug as a browser from ip.
func visit(sd *built, slug, path, ip, referer string) int {
	req := httptest.NewRequest(http.MethodGet, "http://"+slug+".sites.test"+path, nil)
	req.RemoteAddr = ip + ":40000"
	req.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) Chrome/130.0")
	if referer != "" {
		req.Header.Set("Referer", referer)
	}
	rec := httptest.NewRecorder()
	sd.server.ServeSite(rec, req, slug)
	return rec.Code
}

// statsRow is the site_stats row of a deployment and date, or nil; a
// failed query fails the test (it is no missing row).
func statsRow(t *testing.T, app core.App, dep, date string) *statsdb.Row {
	t.Helper()
	row, err := statsdb.FindRow(app, dep, date)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	} else if err != nil {
		t.Fatal(err)
	}
	return row
}

// countStats counts the site_stats rows; a failed query fails the test.
func countStats(t *testing.T, app core.App) int64 {
	t.Helper()
	n, err := app.CountRecords(statsdb.CollectionName)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// statsRowsOf counts the site_stats rows of deployment dep, whatever
// their date (0 when the query fails: it is called where a test cannot
// fail).
func statsRowsOf(app core.App, dep string) int64 {
	rows, _ := statsdb.FindRows(app, dep, time.Time{}, time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC))
	return int64(len(rows))
}

func analyticsOn(c *Config) { c.Analytics = true }

func TestAnalyticsFlushMergesIntoTheDaysRow(t *testing.T) {
	app, sd := newBareApp(t, analyticsOn)
	defer app.Cleanup()
	alice := mustUser(t, app, "alice@example.com", "free", fixtureKey("alice"))
	dep := mustDeploy(t, sd, alice, "", "stats", "<h1>hi</h1>", "Stats")
	today := time.Now().UTC().Format(time.DateOnly)

	visit(sd, "stats", "/", "198.51.100.1", "https://news.example/item?id=1")
	visit(sd, "stats", "/", "198.51.100.2", "")
	visit(sd, "stats", "/missing", "198.51.100.2", "")
	sd.statsFlush.FlushPeriodic()
	row := statsRow(t, app, dep.Id, today)
	if row == nil {
		t.Fatal("no row after the flush")
	}
	if row.PageViews() != 2 || row.Visitors() != 2 || row.NotFound() != 1 || row.Bytes() == 0 {
		t.Fatalf("row after one flush: %v", row.PublicExport())
	}

	visit(sd, "stats", "/", "198.51.100.1", "") // a returning visitor
	visit(sd, "stats", "/", "198.51.100.3", "https://news.example/other")
	sd.statsFlush.FlushPeriodic()
	row = statsRow(t, app, dep.Id, today)
	if row.PageViews() != 4 || row.Visitors() != 3 {
		t.Fatalf("row after two flushes: %v", row.PublicExport())
	}
	refs := row.Referrers()
	if len(refs) != 1 || refs[0].Key != "news.example" || refs[0].Count != 2 {
		t.Fatalf("referrers %+v", refs)
	}
	if nf := row.NotFoundPaths(); len(nf) != 1 || nf[0].Key != "/missing" {
		t.Fatalf("404 paths %+v", nf)
	}
	if pages := row.TopPages(); len(pages) != 1 || pages[0].Key != "/" || pages[0].Count != 4 {
		t.Fatalf("top pages %+v", pages)
	}
	if n := countStats(t, app); n != 1 {
		t.Fatalf("%d rows, want one per deployment and day", n)
	}
}

func TestAnalyticsOff(t *testing.T) {
	app, sd := newBareApp(t)
	defer app.Cleanup()
	if sd.analytics != nil {
		t.Fatal("counting is on with --analytics=false")
	}
	alice := mustUser(t, app, "alice@example.com", "free", fixtureKey("alice"))
	mustDeploy(t, sd, alice, "", "stats", "<h1>hi</h1>", "Stats")
	visit(sd, "stats", "/", "198.51.100.1", "")
	sd.statsFlush.FlushPeriodic()
	if n := countStats(t, app); n != 0 {
		t.Fatalf("%d rows written with counting off", n)
	}
}

func TestAnalyticsFlushedAtShutdown(t *testing.T) {
	app, sd := newBareApp(t, analyticsOn)
	alice := mustUser(t, app, "alice@example.com", "free", fixtureKey("alice"))
	dep := mustDeploy(t, sd, alice, "", "stats", "<h1>hi</h1>", "Stats")
	visit(sd, "stats", "/", "198.51.100.1", "")
	var rows int64
	app.OnTerminate().BindFunc(func(e *core.TerminateEvent) error {
		rows = statsRowsOf(e.App, dep.Id)
		return e.Next()
	})
	app.Cleanup()
	if rows != 1 {
		t.Fatalf("%d rows at shutdown, want the flushed one", rows)
	}
}

// missAlot asks site slug for n distinct missing paths of about 4 KiB
// (just under the longest path a site answers), made of '<', which JSON
// writes as 6 bytes: together far more than a stored list may hold.
func missAlot(t *testing.T, sd *built, slug string, n int) {
	t.Helper()
	long := strings.Repeat("%3C", 4000)
	for i := range n {
		if code := visit(sd, slug, fmt.Sprintf("/missing-%d-%s", i, long), "198.51.100.9", ""); code != http.StatusNotFound {
			t.Fatalf("missing path %d answered %d", i, code)
		}
	}
}

// checkNotFoundRow checks that the row of dep today counts n 404s, and
// that its stored list of 404 paths is bounded yet adds up to n.
func checkNotFoundRow(t *testing.T, app core.App, dep string, n int) {
	t.Helper()
	row := statsRow(t, app, dep, time.Now().UTC().Format(time.DateOnly))
	if row == nil {
		t.Fatal("the site with many long missing paths has no row")
	}
	if got := row.NotFound(); got != int64(n) {
		t.Fatalf("not_found %d, want %d", got, n)
	}
	list := row.NotFoundPaths()
	if len(list) > statsdb.TopLimit+1 {
		t.Fatalf("%d stored 404 paths, want at most %d and %q", len(list), statsdb.TopLimit, analytics.Other)
	}
	var sum int64
	for _, c := range list {
		sum += c.Count
		if len(c.Key) > analytics.MaxKeyLen {
			t.Fatalf("a stored path of %d bytes", len(c.Key))
		}
	}
	if sum != int64(n) {
		t.Fatalf("the stored 404 paths count %d, want all %d", sum, n)
	}
}

func TestAnalyticsLongMissingPathsBlockNoRow(t *testing.T) {
	app, sd := newBareApp(t, analyticsOn)
	defer app.Cleanup()
	alice := mustUser(t, app, "alice@example.com", "free", fixtureKey("alice"))
	noisy := mustDeploy(t, sd, alice, "", "noisy", "<h1>hi</h1>", "Noisy")
	quiet := mustDeploy(t, sd, alice, "", "quiet", "<h1>hi</h1>", "Quiet")
	missAlot(t, sd, "noisy", 120)
	visit(sd, "quiet", "/", "198.51.100.1", "")
	sd.statsFlush.FlushPeriodic()

	row := statsRow(t, app, quiet.Id, time.Now().UTC().Format(time.DateOnly))
	if row == nil || row.PageViews() != 1 {
		t.Fatal("another site's 404s kept this site's row from being written")
	}
	checkNotFoundRow(t, app, noisy.Id, 120)

	missAlot(t, sd, "noisy", 120) // merged into the stored row, still bounded
	sd.statsFlush.FlushPeriodic()
	checkNotFoundRow(t, app, noisy.Id, 240)
}

func TestAnalyticsFailedRowKeptForTheNextFlush(t *testing.T) {
	app, sd := newBareApp(t, analyticsOn)
	defer app.Cleanup()
	alice := mustUser(t, app, "alice@example.com", "free", fixtureKey("alice"))
	bad := mustDeploy(t, sd, alice, "", "bad", "<h1>hi</h1>", "Bad")
	good := mustDeploy(t, sd, alice, "", "good", "<h1>hi</h1>", "Good")
	failing := true
	app.OnRecordCreateExecute(statsdb.CollectionName).BindFunc(func(e *core.RecordEvent) error {
		if failing && statsdb.AsRow(e.Record).Deployment() == bad.Id {
			return errors.New("injected write failure")
		}
		return e.Next()
	})
	today := time.Now().UTC().Format(time.DateOnly)

	visit(sd, "bad", "/", "198.51.100.1", "")
	visit(sd, "good", "/", "198.51.100.1", "")
	sd.statsFlush.FlushPeriodic()
	if statsRow(t, app, bad.Id, today) != nil {
		t.Fatal("the failing row was written")
	}
	if row := statsRow(t, app, good.Id, today); row == nil || row.PageViews() != 1 {
		t.Fatal("one site's failing row kept another's from being written")
	}

	failing = false
	visit(sd, "bad", "/", "198.51.100.2", "")
	visit(sd, "good", "/", "198.51.100.2", "")
	sd.statsFlush.FlushPeriodic()
	if row := statsRow(t, app, bad.Id, today); row == nil || row.PageViews() != 2 || row.Visitors() != 2 {
		t.Fatalf("the failed row's counts were not kept for the next flush: %v", row)
	}
	if row := statsRow(t, app, good.Id, today); row.PageViews() != 2 || row.Visitors() != 2 {
		t.Fatalf("a written row was counted twice: %v", row.PublicExport())
	}
}

func TestAnalyticsFlushedAtShutdownDespiteLongMissingPaths(t *testing.T) {
	app, sd := newBareApp(t, analyticsOn)
	alice := mustUser(t, app, "alice@example.com", "free", fixtureKey("alice"))
	noisy := mustDeploy(t, sd, alice, "", "noisy", "<h1>hi</h1>", "Noisy")
	quiet := mustDeploy(t, sd, alice, "", "quiet", "<h1>hi</h1>", "Quiet")
	missAlot(t, sd, "noisy", 120)
	sd.statsFlush.FlushPeriodic() // the minute's flush
	visit(sd, "quiet", "/", "198.51.100.1", "")
	var noisyRows, quietRows int64
	app.OnTerminate().BindFunc(func(e *core.TerminateEvent) error {
		noisyRows = statsRowsOf(e.App, noisy.Id)
		quietRows = statsRowsOf(e.App, quiet.Id)
		return e.Next()
	})
	app.Cleanup()
	if noisyRows != 1 || quietRows != 1 {
		t.Fatalf("rows at shutdown: %d of the noisy site, %d of the quiet one; want one each", noisyRows, quietRows)
	}
}

func TestAnalyticsFlushBudgetKeepsTheRest(t *testing.T) {
	app, sd := newBareApp(t, analyticsOn)
	defer app.Cleanup()
	alice := mustUser(t, app, "alice@example.com", "free", fixtureKey("alice"))
	dep := mustDeploy(t, sd, alice, "", "stats", "<h1>hi</h1>", "Stats")
	today := time.Now().UTC().Format(time.DateOnly)
	visit(sd, "stats", "/", "198.51.100.1", "")
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // no time left
	if left := sd.statsFlush.Flush(ctx); left != 1 || statsRow(t, app, dep.Id, today) != nil {
		t.Fatalf("with no time left, %d days left and the row written: %v", left, statsRow(t, app, dep.Id, today))
	}
	visit(sd, "stats", "/", "198.51.100.2", "")
	sd.statsFlush.FlushPeriodic()
	if row := statsRow(t, app, dep.Id, today); row == nil || row.PageViews() != 2 || row.Visitors() != 2 {
		t.Fatalf("the day left over was not written with the next flush: %v", row)
	}
}

func TestAnalyticsDeletedSiteDropped(t *testing.T) {
	app, sd := newBareApp(t, analyticsOn)
	defer app.Cleanup()
	alice := mustUser(t, app, "alice@example.com", "free", fixtureKey("alice"))
	dep := mustDeploy(t, sd, alice, "", "gone", "<h1>hi</h1>", "Gone")
	visit(sd, "gone", "/", "198.51.100.1", "")
	if err := app.Delete(dep); err != nil {
		t.Fatal(err)
	}
	if left := sd.statsFlush.Flush(context.Background()); left != 0 || countStats(t, app) != 0 {
		t.Fatalf("a deleted site's day: %d left to write, %d rows", left, countStats(t, app))
	}
}
