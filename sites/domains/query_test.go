package domains_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tests"

	_ "sitedrop/migrations"
	"sitedrop/sites"
	"sitedrop/sites/domains"
)

func newApp(t *testing.T) *tests.TestApp {
	t.Helper()
	app, err := tests.NewTestApp(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(app.Cleanup)
	return app
}

func mustDeployment(t *testing.T, app core.App, slug, owner string) *core.Record {
	t.Helper()
	col, err := app.FindCollectionByNameOrId(sites.DeploymentsCollection)
	if err != nil {
		t.Fatal(err)
	}
	rec := core.NewRecord(col)
	rec.Set("slug", slug)
	rec.Set("owner", owner)
	rec.Set("status", sites.StatusActive)
	rec.Set("storage_type", sites.StorageHTML)
	if err := app.Save(rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

func mustUser(t *testing.T, app core.App, email string) *core.Record {
	t.Helper()
	col, err := app.FindCollectionByNameOrId("users")
	if err != nil {
		t.Fatal(err)
	}
	u := core.NewRecord(col)
	u.SetEmail(email)
	u.SetRandomPassword()
	if err := app.Save(u); err != nil {
		t.Fatal(err)
	}
	return u
}

// allVerified returns every verified domain with its deployment's id.
func allVerified(t *testing.T, app core.App) map[string]string {
	t.Helper()
	recs, err := app.FindRecordsByFilter(domains.Collection, "status = {:s}", "", 0, 0, dbx.Params{"s": domains.StatusVerified})
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]string, len(recs))
	for _, r := range recs {
		out[r.GetString("domain")] = r.GetString("deployment")
	}
	return out
}

// TestFirstToVerifyWins: two sites claim a domain; the first verified
// takes it, the other's claim fails, and a third cannot add it.
func TestFirstToVerifyWins(t *testing.T) {
	t.Parallel()
	app := newApp(t)
	user := mustUser(t, app, "a@example.com")
	a, b, c := mustDeployment(t, app, "alpha", user.Id), mustDeployment(t, app, "bravo", user.Id), mustDeployment(t, app, "charlie", "")
	ra, err := domains.Add(context.Background(), app, a.Id, "shop.example.com")
	if err != nil {
		t.Fatal(err)
	}
	rb, err := domains.Add(context.Background(), app, b.Id, "shop.example.com")
	if err != nil {
		t.Fatal(err)
	}
	if ra.GetString("token") == rb.GetString("token") || ra.GetString("status") != domains.StatusPending {
		t.Fatalf("claims: %v %v", ra, rb)
	}
	if again, err := domains.Add(context.Background(), app, a.Id, "shop.example.com"); !errors.Is(err, domains.ErrExists) || again.Id != ra.Id {
		t.Fatalf("adding again = %v, %v", again, err)
	}
	now := time.Now().UTC()
	rb, err = domains.Result(app, rb, &domains.CheckError{Reason: "no TXT record"}, now)
	if err != nil || rb.GetString("status") != domains.StatusPending || rb.GetString("reason") != "no TXT record" || rb.GetInt("attempts") != 1 {
		t.Fatalf("failed check = %v, %v", rb, err)
	}
	ra, err = domains.Result(app, ra, nil, now)
	if err != nil || ra.GetString("status") != domains.StatusVerified || ra.GetDateTime("verified").IsZero() {
		t.Fatalf("verified = %v, %v", ra, err)
	}
	rb, _ = domains.Find(app, b.Id, "shop.example.com")
	if rb.GetString("status") != domains.StatusFailed || rb.GetString("reason") != domains.ReasonTakenElsewhere {
		t.Fatalf("the other claim: %s %q", rb.GetString("status"), rb.GetString("reason"))
	}
	if _, err := domains.Add(context.Background(), app, c.Id, "shop.example.com"); !errors.Is(err, domains.ErrTaken) {
		t.Fatalf("third claim = %v", err)
	}
	// the failed claim cannot start again while the domain is verified elsewhere
	if err := domains.Reset(app, rb); !errors.Is(err, domains.ErrTaken) {
		t.Fatalf("reset of the other claim = %v", err)
	}
	if rb, _ = domains.Find(app, b.Id, "shop.example.com"); rb.GetString("status") != domains.StatusFailed {
		t.Fatalf("the refused reset changed the claim: %s", rb.GetString("status"))
	}
	if hosts, err := domains.VerifiedHosts(app, a.Id); err != nil || !slices.Equal(hosts, []string{"shop.example.com"}) {
		t.Fatalf("VerifiedHosts = %v, %v", hosts, err)
	}
	if all := allVerified(t, app); len(all) != 1 || all["shop.example.com"] != a.Id {
		t.Fatalf("verified domains = %v", all)
	}
	if n, err := domains.CountOwned(app, user.Id); err != nil || n != 2 {
		t.Fatalf("CountOwned = %d, %v", n, err)
	}

	// deleting the deployment releases the domain
	if err := app.Delete(a); err != nil {
		t.Fatal(err)
	}
	if all := allVerified(t, app); len(all) != 0 {
		t.Fatalf("after delete: %v", all)
	}
	if _, err := domains.Add(context.Background(), app, c.Id, "shop.example.com"); err != nil {
		t.Fatalf("claim after release: %v", err)
	}
}

// TestDueAndExpiry: pending claims are due by backoff, and fail after
// MaxPending with the last reason; Reset makes a failed one pending again.
func TestDueAndExpiry(t *testing.T) {
	t.Parallel()
	app := newApp(t)
	dep := mustDeployment(t, app, "alpha", "")
	rec, err := domains.Add(context.Background(), app, dep.Id, "shop.example.com")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	due := func(at time.Time) int {
		recs, err := domains.Due(app, at, 10)
		if err != nil {
			t.Fatal(err)
		}
		return len(recs)
	}
	if due(now) != 1 {
		t.Fatal("a new claim is due at once")
	}
	rec, _ = domains.Result(app, rec, &domains.CheckError{Reason: "no TXT"}, now)
	if due(now) != 1 {
		t.Fatal("after the check made when it is added, a claim is due at the job's next run")
	}
	rec, _ = domains.Result(app, rec, &domains.CheckError{Reason: "no TXT"}, now)
	if due(now.Add(time.Minute-time.Second)) != 0 || due(now.Add(time.Minute)) != 1 {
		t.Fatal("after two attempts the next check is a minute later")
	}
	rec, err = domains.Result(app, rec, &domains.CheckError{Reason: "no TXT"}, now.Add(domains.MaxPending+time.Minute))
	if err != nil || rec.GetString("status") != domains.StatusFailed || rec.GetString("reason") != "not verified within 72 hours: no TXT" {
		t.Fatalf("expired = %s %q %v", rec.GetString("status"), rec.GetString("reason"), err)
	}
	if due(now.Add(100*time.Hour)) != 0 {
		t.Fatal("a failed claim is not due")
	}
	if err := domains.Reset(app, rec); err != nil || rec.GetString("status") != domains.StatusPending || due(time.Now()) != 1 {
		t.Fatalf("reset: %v %s", err, rec.GetString("status"))
	}
}

// TestNewlyVerified: a record hook sees, through NewlyVerified, the saves
// that make a claim verified (a check that verifies it, a claim created
// verified) and no other (a pending claim's checks, a verified claim's
// saves).
func TestNewlyVerified(t *testing.T) {
	t.Parallel()
	app := newApp(t)
	dep := mustDeployment(t, app, "alpha", "")
	var seen []string
	record := func(e *core.RecordEvent) error {
		if name, ok := domains.NewlyVerified(e.Record); ok {
			seen = append(seen, name)
		}
		return e.Next()
	}
	app.OnRecordAfterCreateSuccess(domains.Collection).BindFunc(record)
	app.OnRecordAfterUpdateSuccess(domains.Collection).BindFunc(record)

	rec, err := domains.Add(context.Background(), app, dep.Id, "shop.example.com")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	if rec, err = domains.Result(app, rec, &domains.CheckError{Reason: "no TXT"}, now); err != nil || len(seen) != 0 {
		t.Fatalf("a pending claim's saves: %v %v", seen, err)
	}
	if _, err = domains.Result(app, rec, nil, now); err != nil || !slices.Equal(seen, []string{"shop.example.com"}) {
		t.Fatalf("the check that verifies it: %v %v", seen, err)
	}
	found, err := domains.Find(app, dep.Id, "shop.example.com")
	if err != nil {
		t.Fatal(err)
	}
	if _, err = domains.Result(app, found, nil, now.Add(time.Minute)); err != nil || len(seen) != 1 {
		t.Fatalf("a verified claim saved again: %v %v", seen, err)
	}
	col, err := app.FindCollectionByNameOrId(domains.Collection)
	if err != nil {
		t.Fatal(err)
	}
	made := core.NewRecord(col) // as the dashboard would
	made.Set("domain", "made.example.com")
	made.Set("deployment", dep.Id)
	made.Set("status", domains.StatusVerified)
	made.Set("token", "tok")
	if err := app.Save(made); err != nil || !slices.Equal(seen, []string{"shop.example.com", "made.example.com"}) {
		t.Fatalf("a claim created verified: %v %v", seen, err)
	}
}
