package hooks

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"

	"sitedrop/hooks/dbconnect"
	"sitedrop/sites"
)

// countStatements counts the SQL statements app runs from now on, on
// its data database (both pools, transactions included), and returns
// the counter.
func countStatements(tb testing.TB, app core.App) *atomic.Int64 {
	tb.Helper()
	n := new(atomic.Int64)
	for _, b := range []dbx.Builder{app.ConcurrentDB(), app.NonconcurrentDB()} {
		db, ok := b.(*dbx.DB)
		if !ok {
			tb.Fatalf("%T is not a *dbx.DB", b)
		}
		db.QueryLogFunc = func(context.Context, time.Duration, string, *sql.Rows, error) { n.Add(1) }
		db.ExecLogFunc = func(context.Context, time.Duration, string, sql.Result, error) { n.Add(1) }
	}
	return n
}

// BenchmarkDeployOnePage creates one-page sites of a pro account, as
// bench/deploy.sh's one-page deploys do: through the service (the
// API's precheck, then Create) and through POST /deploy with an API
// key. stmts/op is the SQL statements a deploy runs.
func BenchmarkDeployOnePage(b *testing.B) {
	b.Run("service", func(b *testing.B) {
		app, sd := newBareApp(b, func(c *Config) { c.ProSlots = 10_000 })
		defer app.Cleanup()
		pia := mustUser(b, app, "pia@example.com", sites.PlanPro, keyPia)
		ctx := context.Background()
		n := countStatements(b, app)
		n.Store(0)
		u0, k0 := cpu()
		b.ResetTimer()
		for i := 0; b.Loop(); i++ {
			slug := "page-" + benchLetters(i)
			if err := sd.svc.PrecheckCreate(pia, slug); err != nil {
				b.Fatal(err)
			}
			_, err := sd.svc.Create(ctx, sites.CreateParams{Owner: pia, Slug: slug, Prechecked: true,
				Upload: htmlUpload(fmt.Sprintf("<!doctype html><title>%s</title><h1>%s</h1>%0800d", slug, slug, i))})
			if err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(n.Load())/float64(b.N), "stmts/op")
		u, k := cpu()
		b.ReportMetric(float64(u-u0)/float64(b.N)/1e3, "user-µs/op")
		b.ReportMetric(float64(k-k0)/float64(b.N)/1e3, "sys-µs/op")
	})
	b.Run("http", func(b *testing.B) {
		app, _ := newBareApp(b, func(c *Config) { c.ProSlots = 10_000; c.DeploysPerMinute = -1 })
		defer app.Cleanup()
		mustUser(b, app, "pia@example.com", sites.PlanPro, keyPia)
		mux := newMux(b, app)
		n := countStatements(b, app)
		n.Store(0)
		u0, k0 := cpu()
		b.ResetTimer()
		for i := 0; b.Loop(); i++ {
			slug := "page-" + benchLetters(i)
			body := fmt.Sprintf(`{"slug":%q,"files":[{"path":"index.html","contentType":"text/html","content":"<!doctype html><title>%s</title><h1>%s</h1>%0800d"}]}`, slug, slug, slug, i)
			req := httptest.NewRequest(http.MethodPost, "http://web.test/deploy", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+keyPia)
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			mux.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				b.Fatalf("%d %s", rec.Code, rec.Body)
			}
		}
		b.ReportMetric(float64(n.Load())/float64(b.N), "stmts/op")
		u, k := cpu()
		b.ReportMetric(float64(u-u0)/float64(b.N)/1e3, "user-µs/op")
		b.ReportMetric(float64(k-k0)/float64(b.N)/1e3, "sys-µs/op")
	})
}

// benchLetters spells i in lowercase letters (slugs take no digits).
func benchLetters(i int) string {
	b := []byte{}
	for {
		b = append(b, byte('a'+i%26))
		i /= 26
		if i == 0 {
			return string(b)
		}
	}
}

// cpu is the CPU time the process has used, in user space and in the
// kernel, in ns: what a deploy costs the server, which the machine's
// other load skews far less than the wall time. The kernel's share is
// mostly the blob store's files (their creation, syncfs).
func cpu() (user, sys int64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return ru.Utime.Nano(), ru.Stime.Nano()
}

// TestOnePageDeployStatements pins what a one-page deploy of a new site
// costs the database once the server is warm (POST /deploy with an API
// key, as bench/deploy.sh sends): the SQL statements it runs, counted on
// both of PocketBase's pools, and the statements it prepares, which
// stmtcache makes none (each connection keeps the ones it prepared). A
// change that adds a statement to the deploy path, or a query whose
// text changes from one deploy to the next (a value written into the
// SQL instead of bound), fails here.
func TestOnePageDeployStatements(t *testing.T) {
	app, _ := newBareApp(t, func(c *Config) { c.DeploysPerMinute = -1 })
	defer app.Cleanup()
	mustUser(t, app, "pia@example.com", sites.PlanPro, keyPia)
	mux := newMux(t, app)
	deploy := func(slug string) {
		t.Helper()
		body := fmt.Sprintf(`{"slug":%q,"files":[{"path":"index.html","contentType":"text/html","content":"<h1>%s</h1>"}]}`, slug, slug)
		res, out := do(t, mux, http.MethodPost, "http://web.test/deploy", body, bearer(keyPia))
		if res.StatusCode != http.StatusOK {
			t.Fatalf("deploy %s: %d %s", slug, res.StatusCode, out)
		}
	}
	d, err := dbconnect.Driver()
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []dbx.Builder{app.ConcurrentDB(), app.NonconcurrentDB()} {
		if b.(*dbx.DB).DB().Driver() != d {
			t.Fatal("the app's database is not opened through dbconnect's statement cache")
		}
	}
	prepared := d.Prepared()
	for _, slug := range []string{"warm-one", "warm-two", "warm-three"} {
		deploy(slug)
	}
	if d.Prepared() == prepared {
		t.Fatal("the first deploys prepared no statement: the count does not count")
	}
	n := countStatements(t, app)
	prepared = d.Prepared()
	const deploys = 5
	for i := range deploys {
		deploy("page-" + benchLetters(i))
	}
	// auth (key, user), precheck (slug, kept slug, plan and slots: one
	// statement when the slug is free), the transaction (slug, owner relation, plan and slots, kept slug, the
	// deployment, its audit entry, the version's deployment relation, the
	// version; the version's hooks take the deployment the transaction
	// has just saved); the draft webhook's hook takes the live pointer
	// from the save (SavedLive), not from a read after the commit
	const want = 11
	if got := n.Load(); got != deploys*want {
		t.Errorf("%d deploys ran %d SQL statements, want %d each", deploys, got, want)
	}
	if got := d.Prepared() - prepared; got != 0 {
		t.Errorf("%d warm deploys prepared %d statements, want none (kept from the first deploys)", deploys, got)
	}
}
