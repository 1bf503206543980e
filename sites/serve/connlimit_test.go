package serve

import (
	"net"
	"net/netip"
	"testing"
)

// TestConnLimitClients: IPv6 clients are counted by /64, IPv4-mapped
// addresses as IPv4, and trusted proxies not at all.
func TestConnLimitClients(t *testing.T) {
	proxies := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::1/128")}
	l := NewConnLimit(1, proxies)
	tcp := func(s string) net.Addr { return net.TCPAddrFromAddrPort(netip.MustParseAddrPort(s)) }
	for _, c := range []struct {
		addr string
		ok   bool
	}{
		{"[2001:db8:1:2::1]:1000", true},
		{"[2001:db8:1:2:ffff::9]:1001", false}, // same /64
		{"[2001:db8:1:3::1]:1000", true},
		{"192.0.2.1:1000", true},
		{"[::ffff:192.0.2.1]:1001", false}, // the same IPv4 client
		{"192.0.2.2:1000", true},
		{"10.1.2.3:1000", true}, // a trusted proxy: not counted
		{"10.1.2.3:1001", true},
		{"[fd00::1]:1000", true},
		{"[fd00::1]:1001", true},
		{"[fd00::2]:1000", true},
		{"[fd00::3]:1000", false},
	} {
		if _, ok := l.acquire(tcp(c.addr)); ok != c.ok {
			t.Errorf("acquire(%s) = %v, want %v", c.addr, ok, c.ok)
		}
	}
	key, _ := l.acquire(tcp("198.51.100.1:1"))
	l.release(key)
	if _, ok := l.acquire(tcp("198.51.100.1:2")); !ok {
		t.Error("a released place was not free")
	}
	if n := len(l.open); n != 6 {
		t.Errorf("%d clients counted, want 6", n)
	}
	if _, ok := (*ConnLimit)(nil).acquire(tcp("192.0.2.1:1")); !ok {
		t.Error("no limit refused a connection")
	}
	if NewConnLimit(0, nil) != nil || NewConnLimit(-1, nil) != nil {
		t.Error("a cap of 0 or less is a limit")
	}
}
