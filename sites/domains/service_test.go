package domains_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
	"sitedrop/sites/domains"
)

// newService is the service of app, asking z for DNS records, with
// one domain on the free plan and two on pro.
func newService(app core.App, z *zoneServer) *domains.Service {
	return domains.NewService(app, domains.Config{
		FreeLimit: 1, ProLimit: 2,
		Rules:     domains.Rules{WebHost: "web.test", SitesDomain: "sites.test"},
		Resolvers: func() []string { return []string{z.addr} },
		SiteHost:  func(slug string) string { return slug + ".sites.test" },
	})
}

// TestServiceAdd: a claim is refused, with the package's errors and
// nothing saved, for a name that is not a domain or is the server's,
// over the plan's limit, or when verified on another site; a claim is
// checked at once, and checked again until its records are there.
func TestServiceAdd(t *testing.T) {
	t.Parallel()
	app := newApp(t)
	z := startZone(t)
	svc := newService(app, z)
	user := mustUser(t, app, "a@example.com")
	acct := domains.AccountOf(user)
	alpha := domains.SiteOf(mustDeployment(t, app, "alpha", user.Id))
	other := domains.SiteOf(mustDeployment(t, app, "other", ""))
	ctx := context.Background()

	d, created, err := svc.Add(ctx, acct, alpha, "Shop.Example.COM", nil)
	if err != nil || !created || d.Name() != "shop.example.com" || d.Status() != domains.StatusPending ||
		d.Reason() != "no TXT record at _sitedrop-challenge.shop.example.com" || d.Attempts() != 1 {
		t.Fatalf("first claim: %v %v %v", d, created, err)
	}
	if again, created, err := svc.Add(ctx, acct, alpha, "shop.example.com", nil); err != nil || created || again.Id != d.Id {
		t.Fatalf("the same claim again: %v %v %v", again, created, err)
	}
	var le *domains.LimitError
	for _, c := range []struct {
		name, raw string
		site      domains.Site
		acct      domains.Account
		want      func(error) bool
	}{
		{"an IP", "192.0.2.1", alpha, acct, func(err error) bool { return errors.Is(err, domains.ErrIP) }},
		{"the sites domain", "x.sites.test", alpha, acct, func(err error) bool { return errors.Is(err, domains.ErrReserved) }},
		{"over the free plan", "second.example.com", alpha, acct, func(err error) bool {
			return errors.As(err, &le) && *le == domains.LimitError{Limit: 1, Plan: sites.PlanFree}
		}},
		{"within the pro plan", "third.example.com", alpha, domains.Account{ID: user.Id, Plan: sites.PlanPro},
			func(err error) bool { return err == nil }},
		{"over the pro plan, at its limit", "fourth.example.com", alpha, domains.Account{ID: user.Id, Plan: sites.PlanPro},
			func(err error) bool {
				return errors.As(err, &le) && *le == domains.LimitError{Limit: 2, Plan: sites.PlanPro}
			}},
	} {
		if _, _, err := svc.Add(ctx, c.acct, c.site, c.raw, nil); !c.want(err) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	if n, err := svc.Used(acct); err != nil || n != 2 {
		t.Fatalf("used after the refusals: %d %v", n, err)
	}

	z.set(t, "_sitedrop-challenge.shop.example.com. 60 IN TXT \""+d.Token()+"\"",
		"shop.example.com. 60 IN CNAME alpha.sites.test.")
	if d, err = svc.Recheck(ctx, d, alpha.Slug, nil); err != nil || d.Status() != domains.StatusVerified || d.Verified().IsZero() {
		t.Fatalf("check with the records in place: %v %v", d, err)
	}
	if _, _, err := svc.Add(ctx, domains.Account{ID: "nobody"}, other, "shop.example.com", nil); !errors.Is(err, domains.ErrTaken) {
		t.Fatalf("a claim of a domain verified elsewhere: %v", err)
	}

	for _, raw := range []string{"nope.example.com", "not a domain"} {
		if _, err := svc.Lookup(alpha.ID, raw); !errors.Is(err, domains.ErrNotFound) {
			t.Errorf("Lookup(%q) = %v", raw, err)
		}
	}
	if got, err := svc.Lookup(alpha.ID, "SHOP.example.com."); err != nil || got.Id != d.Id {
		t.Fatalf("Lookup of the claim: %v %v", got, err)
	}
	if err := svc.Remove(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Lookup(alpha.ID, "shop.example.com"); !errors.Is(err, domains.ErrNotFound) {
		t.Fatalf("Lookup after Remove = %v", err)
	}
}

// TestServiceDNSBudget: a check reserves DNSQuestionsPerCheck of the
// server's budget before it starts, refused with a *BudgetError when
// there is no room; Done gives back what it did not ask.
func TestServiceDNSBudget(t *testing.T) {
	t.Parallel()
	svc := newService(newApp(t), startZone(t))
	budget, now := svc.DNSBudget(), time.Now()
	if budget.Max() != domains.DNSQuestionsPerMinute {
		t.Fatalf("budget %d a minute", budget.Max())
	}
	budget.AllowN(domains.DNSBudgetKey, domains.DNSQuestionsPerMinute-domains.DNSQuestionsPerCheck, now)
	a, err := svc.Reserve(now)
	if err != nil {
		t.Fatal(err)
	}
	var be *domains.BudgetError
	if _, err := svc.Reserve(now); !errors.As(err, &be) || be.RetryAfter <= 0 || be.RetryAfter > time.Minute {
		t.Fatalf("a reservation over the budget: %v", err)
	}
	a.Done()
	if n := budget.Count(domains.DNSBudgetKey, now); n != domains.DNSQuestionsPerMinute-domains.DNSQuestionsPerCheck {
		t.Fatalf("after Done of an unused reservation, %d questions are counted", n)
	}
	var none *domains.Allowance
	none.Done() // a nil allowance (a removal's) is done at once
}

// TestTable: the route table serves a verified domain's site, redirects
// www.<apex> when both are verified on one deployment, knows a claimed
// domain that is not verified (no certificate for it), and is loaded
// again after Invalidate.
func TestTable(t *testing.T) {
	t.Parallel()
	app := newApp(t)
	dep := mustDeployment(t, app, "alpha", "")
	verify := func(name string) {
		t.Helper()
		d, err := domains.Add(context.Background(), app, dep.Id, name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := domains.Result(app, d, nil, time.Now().UTC()); err != nil {
			t.Fatal(err)
		}
	}
	verify("example.com")
	verify("www.example.com")
	if _, err := domains.Add(context.Background(), app, dep.Id, "pending.example.org"); err != nil {
		t.Fatal(err)
	}
	table := domains.NewTable(app)
	for host, want := range map[string]domains.Route{
		"example.com":         {Slug: "alpha"},
		"www.example.com":     {Slug: "alpha", Apex: "example.com"},
		"pending.example.org": {},
	} {
		if got, ok, err := table.Lookup(host); err != nil || !ok || got != want {
			t.Errorf("Lookup(%s) = %+v %v %v, want %+v", host, got, ok, err, want)
		}
	}
	if _, ok, _ := table.Lookup("unknown.example.net"); ok {
		t.Error("an unknown host has a route")
	}
	if table.AllowCertificate("example.com") != nil || table.AllowCertificate("pending.example.org") == nil ||
		table.AllowCertificate("unknown.example.net") == nil {
		t.Error("certificates: only for verified domains")
	}
	verify("late.example.net")
	if _, ok, _ := table.Lookup("late.example.net"); ok {
		t.Fatal("the table was loaded again without Invalidate")
	}
	table.Invalidate()
	if got, ok, _ := table.Lookup("late.example.net"); !ok || got.Slug != "alpha" {
		t.Fatalf("after Invalidate: %+v %v", got, ok)
	}
}

// TestNewClaimCheckedByNextRun: a new claim of a domain is checked again
// by the job's next run after the check made when it was added, whatever
// the backoff an older claim of the same domain had reached: the backoff
// is the claim's own and starts with the job's checks.
func TestNewClaimCheckedByNextRun(t *testing.T) {
	t.Parallel()
	app := newApp(t)
	z := startZone(t)
	svc := newService(app, z)
	ctx := context.Background()
	alice, bob := mustUser(t, app, "a@example.com"), mustUser(t, app, "b@example.com")
	alpha := domains.SiteOf(mustDeployment(t, app, "alpha", alice.Id))
	bravo := domains.SiteOf(mustDeployment(t, app, "bravo", bob.Id))

	// alice's claim has been failing for a while: its next check is an hour away
	old, _, err := svc.Add(ctx, domains.AccountOf(alice), alpha, "shop.example.com", nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	for range 8 {
		if old, err = domains.Result(app, old, &domains.CheckError{Reason: "no TXT"}, now); err != nil {
			t.Fatal(err)
		}
	}
	if wait := domains.Backoff(old.Attempts()); wait != time.Hour {
		t.Fatalf("the old claim's backoff is %s, want an hour", wait)
	}
	if err := svc.Remove(context.Background(), old); err != nil {
		t.Fatal(err)
	}

	// bob claims the domain before its records are in place...
	claim, created, err := svc.Add(ctx, domains.AccountOf(bob), bravo, "shop.example.com", nil)
	if err != nil || !created || claim.Status() != domains.StatusPending {
		t.Fatalf("the new claim: %v %v %v", claim, created, err)
	}
	// ... then creates them: the job's next run verifies the domain
	z.set(t, "_sitedrop-challenge.shop.example.com. 60 IN TXT \""+claim.Token()+"\"",
		"shop.example.com. 60 IN CNAME bravo.sites.test.")
	svc.CheckDue(ctx, domains.PerRun)
	got, err := domains.Find(app, bravo.ID, "shop.example.com")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status() != domains.StatusVerified || got.Attempts() != 2 {
		t.Fatalf("after the next run: %s after %d checks (%q), want verified after 2", got.Status(), got.Attempts(), got.Reason())
	}
}
