package domains

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"testing"
	"time"
)

// TestAddrCache: a site host's addresses are looked up once per
// serverAddrsTTL; a failed lookup is not kept; the cache stays bounded.
func TestAddrCache(t *testing.T) {
	var c addrCache
	calls := 0
	fail := false
	lookup := func(_ context.Context, host string) ([]netip.Addr, error) {
		calls++
		if fail {
			return nil, errors.New("no resolver answered")
		}
		return []netip.Addr{netip.MustParseAddr("192.0.2.7")}, nil
	}
	ctx := context.Background()
	t0 := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	steps := []struct {
		name      string
		host      string
		at        time.Duration
		fail      bool
		wantCalls int
		wantErr   bool
	}{
		{"first lookup", "a.sites.test", 0, false, 1, false},
		{"cached", "a.sites.test", time.Minute, false, 1, false},
		{"another host", "b.sites.test", time.Minute, false, 2, false},
		{"expired", "a.sites.test", serverAddrsTTL + time.Second, false, 3, false},
		{"failure is an answer once", "c.sites.test", serverAddrsTTL, true, 4, true},
		{"failure not kept", "c.sites.test", serverAddrsTTL, false, 5, false},
	}
	for _, s := range steps {
		fail = s.fail
		addrs, err := c.get(ctx, s.host, t0.Add(s.at), lookup)
		if calls != s.wantCalls || (err != nil) != s.wantErr || (err == nil && len(addrs) != 1) {
			t.Fatalf("%s: %d lookups, %v, %v; want %d lookups, error %v", s.name, calls, addrs, err, s.wantCalls, s.wantErr)
		}
	}
	for i := range serverAddrsMax + 10 {
		if _, err := c.get(ctx, fmt.Sprintf("h%d.sites.test", i), t0, lookup); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(c.entries); n > serverAddrsMax {
		t.Fatalf("%d entries, bound %d", n, serverAddrsMax)
	}
}

// TestParsePublicIPs: --public-ip's addresses, trimmed, IPv4-mapped ones
// as IPv4; anything else is refused naming the flag and the value.
func TestParsePublicIPs(t *testing.T) {
	got, err := ParsePublicIPs([]string{" 192.0.2.1", "::ffff:192.0.2.2", "2001:db8::1"})
	want := []netip.Addr{netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("192.0.2.2"), netip.MustParseAddr("2001:db8::1")}
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("ParsePublicIPs = %v, %v; want %v", got, err, want)
	}
	if _, err := ParsePublicIPs([]string{"192.0.2.1", "example.com"}); err == nil || err.Error() != `--public-ip "example.com": not an IP address` {
		t.Fatalf("a name: %v", err)
	}
}
