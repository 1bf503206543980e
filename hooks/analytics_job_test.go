package hooks

import (
	"database/sql"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"
)

// visit fetches path from the site slug as a browser from ip.
func visit(sd *sitedrop, slug, path, ip, referer string) int {
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
func statsRow(t *testing.T, app core.App, dep, date string) *core.Record {
	t.Helper()
	rec, err := app.FindFirstRecordByFilter(statsCollection, "deployment = {:d} && date = {:date}", dbx.Params{"d": dep, "date": date})
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	} else if err != nil {
		t.Fatal(err)
	}
	return rec
}

// countStats counts the site_stats rows; a failed query fails the test.
func countStats(t *testing.T, app core.App) int64 {
	t.Helper()
	n, err := app.CountRecords(statsCollection)
	if err != nil {
		t.Fatal(err)
	}
	return n
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
	sd.flushAnalytics()
	row := statsRow(t, app, dep.Id, today)
	if row == nil {
		t.Fatal("no row after the flush")
	}
	if row.GetInt("page_views") != 2 || row.GetInt("visitors") != 2 || row.GetInt("not_found") != 1 || row.GetInt("bytes") == 0 {
		t.Fatalf("row after one flush: %v", row.PublicExport())
	}

	visit(sd, "stats", "/", "198.51.100.1", "") // a returning visitor
	visit(sd, "stats", "/", "198.51.100.3", "https://news.example/other")
	sd.flushAnalytics()
	row = statsRow(t, app, dep.Id, today)
	if row.GetInt("page_views") != 4 || row.GetInt("visitors") != 3 {
		t.Fatalf("row after two flushes: %v", row.PublicExport())
	}
	refs := statsList(row, "referrers")
	if len(refs) != 1 || refs[0].Key != "news.example" || refs[0].Count != 2 {
		t.Fatalf("referrers %+v", refs)
	}
	if nf := statsList(row, "not_found_paths"); len(nf) != 1 || nf[0].Key != "/missing" {
		t.Fatalf("404 paths %+v", nf)
	}
	if pages := statsList(row, "top_pages"); len(pages) != 1 || pages[0].Key != "/" || pages[0].Count != 4 {
		t.Fatalf("top pages %+v", pages)
	}
	if n := countStats(t, app); n != 1 {
		t.Fatalf("%d rows, want one per deployment and day", n)
	}
}

func TestAnalyticsPurgeAndCascade(t *testing.T) {
	app, sd := newBareApp(t, analyticsOn)
	defer app.Cleanup()
	alice := mustUser(t, app, "alice@example.com", "free", fixtureKey("alice"))
	dep := mustDeploy(t, sd, alice, "", "stats", "<h1>hi</h1>", "Stats")
	col, err := app.FindCollectionByNameOrId(statsCollection)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	for _, date := range []string{"2025-04-26", "2025-04-27", "2026-05-31"} { // 401, 400 and 1 day old
		r := core.NewRecord(col)
		r.Set("deployment", dep.Id)
		r.Set("date", date)
		r.Set("page_views", 1)
		if err := app.Save(r); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := purgeStats(app, now); err != nil || n != 1 {
		t.Fatalf("purged %d (%v), want the one row older than 400 days", n, err)
	}
	if statsRow(t, app, dep.Id, "2025-04-26") != nil || statsRow(t, app, dep.Id, "2025-04-27") == nil {
		t.Fatal("purged the wrong rows")
	}
	if err := app.Delete(dep); err != nil {
		t.Fatal(err)
	}
	if n := countStats(t, app); n != 0 {
		t.Fatalf("%d rows outlived their deployment", n)
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
	sd.flushAnalytics()
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
		rows, _ = e.App.CountRecords(statsCollection, dbx.HashExp{"deployment": dep.Id})
		return e.Next()
	})
	app.Cleanup()
	if rows != 1 {
		t.Fatalf("%d rows at shutdown, want the flushed one", rows)
	}
}
