package certs

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/caddyserver/certmagic"
)

// liveNames stands for the server's decision (sitedrop's: www.<web host>
// and live sites), with each name's class.
var liveNames = map[string]Class{
	"www.web.test":           Owned,
	"alice-site.sites.test":  Owned,
	"bob-site.sites.test":    Owned,
	"anon-site.sites.test":   Anonymous,
	"anon-two.sites.test":    Anonymous,
	"anon-three.sites.test":  Anonymous,
	"second-site.sites.test": Owned,
	"third-site.sites.test":  Owned,
}

// testManager builds a Manager for web.test and sites.test whose CA is
// never asked.
func testManager(t *testing.T, newCertsPerHour int) *Manager {
	t.Helper()
	m, err := New(Config{
		WebHost:     "web.test",
		SitesDomain: "sites.test",
		Allow: func(_ context.Context, name string) (Class, error) {
			class, ok := liveNames[name]
			if !ok {
				return Owned, fmt.Errorf("no certificate for %q", name)
			}
			return class, nil
		},
		StorageDir:      t.TempDir(),
		Logger:          slog.New(slog.DiscardHandler),
		LogOutput:       io.Discard,
		CA:              "https://127.0.0.1:1/dir", // never asked
		NewCertsPerHour: newCertsPerHour,
		HTTPPort:        80,
		HTTPSPort:       443,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Stop)
	return m
}

// TestOnDemandBudget: new on-demand certificates are limited per hour,
// each name charged once; names whose certificate is in storage (loads,
// renewals) are not charged.
func TestOnDemandBudget(t *testing.T) {
	m := testManager(t, 2)
	ctx := context.Background()
	// alice-site's certificate is stored: loading it takes no budget.
	key := certmagic.StorageKeys.SiteCert(m.siteIssuer.IssuerKey(), "alice-site.sites.test")
	if err := m.storage.Store(ctx, key, []byte("stored")); err != nil {
		t.Fatal(err)
	}
	decide := m.sites.OnDemand.DecisionFunc
	for i, c := range []struct {
		name    string
		allowed bool
	}{
		{"second-site.sites.test", true},
		{"second-site.sites.test", true}, // a retry is not charged again
		{"third-site.sites.test", true},
		{"bob-site.sites.test", false},   // over the budget
		{"ALICE-SITE.sites.test.", true}, // stored
		{"third-site.sites.test", true},  // already charged this hour
		{"nosuch.sites.test", false},
	} {
		if err := decide(ctx, c.name); (err == nil) != c.allowed {
			t.Errorf("%d: decision for %q = %v, want allowed %v", i, c.name, err, c.allowed)
		}
	}
}

// TestOnDemandBudgetAnonymousShare: anonymous sites asking first take at
// most half of the hour's budget; owned names still get the rest.
func TestOnDemandBudgetAnonymousShare(t *testing.T) {
	m := testManager(t, 4)
	decide := m.sites.OnDemand.DecisionFunc
	for i, c := range []struct {
		name    string
		allowed bool
	}{
		{"anon-site.sites.test", true},
		{"anon-two.sites.test", true},
		{"anon-three.sites.test", false}, // past the anonymous half
		{"alice-site.sites.test", true},  // owners are not starved
		{"www.web.test", true},
		{"bob-site.sites.test", false}, // the whole budget is used
		{"anon-site.sites.test", true}, // already charged this hour
	} {
		if err := decide(context.Background(), c.name); (err == nil) != c.allowed {
			t.Errorf("%d: decision for %q = %v, want allowed %v", i, c.name, err, c.allowed)
		}
	}
}

func TestOrderBudget(t *testing.T) {
	t0 := time.Now()
	b := newOrderBudget(2, time.Hour)
	for i, c := range []struct {
		name      string
		class     Class
		at        time.Duration
		ok, first bool
	}{
		{"a", Owned, 0, true, false},
		{"b", Owned, time.Minute, true, false},
		{"c", Owned, 2 * time.Minute, false, true},
		{"d", Owned, 3 * time.Minute, false, false}, // refused again, warned once
		{"e", Anonymous, 3 * time.Minute, false, true},
		{"a", Owned, 4 * time.Minute, true, false},
		{"c", Owned, 61 * time.Minute, true, false}, // a new window
		{"x", Anonymous, 62 * time.Minute, true, false},
		{"y", Anonymous, 63 * time.Minute, false, true}, // the anonymous half is 1
		{"z", Anonymous, 63 * time.Minute, false, false},
		{"d", Owned, 64 * time.Minute, false, true}, // the whole budget: c and x
	} {
		ok, first := b.allow(c.name, c.class, t0.Add(c.at))
		if ok != c.ok || first != c.first {
			t.Errorf("%d: allow(%q, %v) = %v, %v; want %v, %v", i, c.name, c.class, ok, first, c.ok, c.first)
		}
	}
	for _, c := range []struct {
		max   int
		class Class
		ok    bool
	}{
		{0, Owned, false},
		{0, Anonymous, false},
		{1, Anonymous, false}, // half of 1 is none
		{1, Owned, true},
		{-1, Owned, true}, // no limit
		{-1, Anonymous, true},
	} {
		if ok, _ := newOrderBudget(c.max, time.Hour).allow("a", c.class, t0); ok != c.ok {
			t.Errorf("a budget of %d: allow(%v) = %v, want %v", c.max, c.class, ok, c.ok)
		}
	}
}

// TestCertificateDispatch: the web host, however spelled, is served by
// the web config and never reaches the on-demand decision (which would
// refuse it and drop its certificate from the shared cache).
func TestCertificateDispatch(t *testing.T) {
	m := testManager(t, 20)
	var asked []string
	decide := m.sites.OnDemand.DecisionFunc
	m.sites.OnDemand.DecisionFunc = func(ctx context.Context, name string) error {
		asked = append(asked, name)
		return decide(ctx, name)
	}
	tc := m.TLSConfig()
	c1, c2 := net.Pipe()
	defer c1.Close()
	defer c2.Close()
	for _, name := range []string{"web.test", "WEB.test", " web.test", "web.test\t"} {
		_, _ = tc.GetCertificate(&tls.ClientHelloInfo{ServerName: name, Conn: c1})
	}
	if len(asked) != 0 {
		t.Fatalf("the on-demand decision was asked for %q", asked)
	}
	_, _ = tc.GetCertificate(&tls.ClientHelloInfo{ServerName: "nosuch.sites.test", Conn: c1})
	if len(asked) != 1 {
		t.Fatalf("a site name did not reach the on-demand decision: %q", asked)
	}
}
