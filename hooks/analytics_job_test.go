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

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites/analytics"
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

// missAlot asks site slug for n distinct missing paths of about 4 KiB
// (just under the longest path a site answers), made of '<', which JSON
// writes as 6 bytes: together far more than a stored list may hold.
func missAlot(t *testing.T, sd *sitedrop, slug string, n int) {
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
	if got := row.GetInt("not_found"); got != n {
		t.Fatalf("not_found %d, want %d", got, n)
	}
	list := statsList(row, "not_found_paths")
	if len(list) > statsTopLimit+1 {
		t.Fatalf("%d stored 404 paths, want at most %d and %q", len(list), statsTopLimit, analytics.Other)
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
	sd.flushAnalytics()

	row := statsRow(t, app, quiet.Id, time.Now().UTC().Format(time.DateOnly))
	if row == nil || row.GetInt("page_views") != 1 {
		t.Fatal("another site's 404s kept this site's row from being written")
	}
	checkNotFoundRow(t, app, noisy.Id, 120)

	missAlot(t, sd, "noisy", 120) // merged into the stored row, still bounded
	sd.flushAnalytics()
	checkNotFoundRow(t, app, noisy.Id, 240)
}

func TestAnalyticsFailedRowKeptForTheNextFlush(t *testing.T) {
	app, sd := newBareApp(t, analyticsOn)
	defer app.Cleanup()
	alice := mustUser(t, app, "alice@example.com", "free", fixtureKey("alice"))
	bad := mustDeploy(t, sd, alice, "", "bad", "<h1>hi</h1>", "Bad")
	good := mustDeploy(t, sd, alice, "", "good", "<h1>hi</h1>", "Good")
	failing := true
	app.OnRecordCreateExecute(statsCollection).BindFunc(func(e *core.RecordEvent) error {
		if failing && e.Record.GetString("deployment") == bad.Id {
			return errors.New("injected write failure")
		}
		return e.Next()
	})
	today := time.Now().UTC().Format(time.DateOnly)

	visit(sd, "bad", "/", "198.51.100.1", "")
	visit(sd, "good", "/", "198.51.100.1", "")
	sd.flushAnalytics()
	if statsRow(t, app, bad.Id, today) != nil {
		t.Fatal("the failing row was written")
	}
	if row := statsRow(t, app, good.Id, today); row == nil || row.GetInt("page_views") != 1 {
		t.Fatal("one site's failing row kept another's from being written")
	}

	failing = false
	visit(sd, "bad", "/", "198.51.100.2", "")
	visit(sd, "good", "/", "198.51.100.2", "")
	sd.flushAnalytics()
	if row := statsRow(t, app, bad.Id, today); row == nil || row.GetInt("page_views") != 2 || row.GetInt("visitors") != 2 {
		t.Fatalf("the failed row's counts were not kept for the next flush: %v", row)
	}
	if row := statsRow(t, app, good.Id, today); row.GetInt("page_views") != 2 || row.GetInt("visitors") != 2 {
		t.Fatalf("a written row was counted twice: %v", row.PublicExport())
	}
}

func TestAnalyticsFlushedAtShutdownDespiteLongMissingPaths(t *testing.T) {
	app, sd := newBareApp(t, analyticsOn)
	alice := mustUser(t, app, "alice@example.com", "free", fixtureKey("alice"))
	noisy := mustDeploy(t, sd, alice, "", "noisy", "<h1>hi</h1>", "Noisy")
	quiet := mustDeploy(t, sd, alice, "", "quiet", "<h1>hi</h1>", "Quiet")
	missAlot(t, sd, "noisy", 120)
	sd.flushAnalytics() // the minute's flush
	visit(sd, "quiet", "/", "198.51.100.1", "")
	var noisyRows, quietRows int64
	app.OnTerminate().BindFunc(func(e *core.TerminateEvent) error {
		noisyRows, _ = e.App.CountRecords(statsCollection, dbx.HashExp{"deployment": noisy.Id})
		quietRows, _ = e.App.CountRecords(statsCollection, dbx.HashExp{"deployment": quiet.Id})
		return e.Next()
	})
	app.Cleanup()
	if noisyRows != 1 || quietRows != 1 {
		t.Fatalf("rows at shutdown: %d of the noisy site, %d of the quiet one; want one each", noisyRows, quietRows)
	}
}

func TestAnalyticsWorstListFitsItsField(t *testing.T) {
	app, sd := newBareApp(t, analyticsOn)
	defer app.Cleanup()
	col, err := app.FindCollectionByNameOrId(statsCollection)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"top_pages", "referrers", "not_found_paths"} {
		f, ok := col.Fields.GetByName(name).(*core.JSONField)
		if !ok || int64(statsListMaxJSON) > f.MaxSize {
			t.Fatalf("%s holds %d bytes; its list can take %d", name, f.MaxSize, statsListMaxJSON)
		}
	}
	// The worst list indeed: every key byte written as \ufffd, counts of
	// 19 digits. It is written, and within the bound.
	alice := mustUser(t, app, "alice@example.com", "free", fixtureKey("alice"))
	dep := mustDeploy(t, sd, alice, "", "stats", "<h1>hi</h1>", "Stats")
	var worst []analytics.Count
	for i := range statsTopLimit + 50 {
		worst = append(worst, analytics.Count{Key: fmt.Sprintf("%03d", i) + strings.Repeat("\xff", analytics.MaxKeyLen), Count: 1e18})
	}
	day := analytics.Day{Site: dep.Id, Date: time.Now().UTC().Truncate(24 * time.Hour), NotFound: 1, NotFoundPaths: worst}
	if err := saveDay(app, day); err != nil {
		t.Fatal(err)
	}
	row := statsRow(t, app, dep.Id, day.Date.Format(time.DateOnly))
	if n := len(row.GetString("not_found_paths")); n > statsListMaxJSON || n < statsListMaxJSON*9/10 {
		t.Fatalf("the worst list took %d bytes, the bound is %d", n, statsListMaxJSON)
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
	if left := sd.flushStats(ctx); left != 1 || statsRow(t, app, dep.Id, today) != nil {
		t.Fatalf("with no time left, %d days left and the row written: %v", left, statsRow(t, app, dep.Id, today))
	}
	visit(sd, "stats", "/", "198.51.100.2", "")
	sd.flushAnalytics()
	if row := statsRow(t, app, dep.Id, today); row == nil || row.GetInt("page_views") != 2 || row.GetInt("visitors") != 2 {
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
	if left := sd.flushStats(context.Background()); left != 0 || countStats(t, app) != 0 {
		t.Fatalf("a deleted site's day: %d left to write, %d rows", left, countStats(t, app))
	}
}
