package server

import (
	"net/http/httptest"
	"testing"
)

func TestClientIP(t *testing.T) {
	proxies, err := ParseProxies([]string{"10.0.0.0/8", "192.168.1.5"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, remote, xff, want string
	}{
		{"direct client", "203.0.113.7:5000", "", "203.0.113.7"},
		{"direct client cannot forge X-Forwarded-For", "203.0.113.7:5000", "1.2.3.4", "203.0.113.7"},
		{"through a trusted proxy", "10.1.2.3:443", "198.51.100.9", "198.51.100.9"},
		{"client-written entries to the left are ignored", "10.1.2.3:443", "6.6.6.6, 198.51.100.9", "198.51.100.9"},
		{"chain of trusted proxies", "192.168.1.5:80", "198.51.100.9, 10.9.9.9", "198.51.100.9"},
		{"trusted proxy without header", "10.1.2.3:443", "", "10.1.2.3"},
		{"garbage header", "10.1.2.3:443", "not-an-ip", "10.1.2.3"},
		{"IPv6 client", "[2001:db8::1]:443", "", "2001:db8::1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = c.remote
			if c.xff != "" {
				r.Header.Set("X-Forwarded-For", c.xff)
			}
			if got := proxies.ClientIP(r); got != c.want {
				t.Fatalf("ClientIP = %q, want %q", got, c.want)
			}
		})
	}
	if _, err := ParseProxies([]string{"nonsense"}); err == nil {
		t.Fatal("bad proxy accepted")
	}
}

func TestRateKey(t *testing.T) {
	proxies, err := ParseProxies([]string{"10.0.0.0/8"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, remote, xff, want string
	}{
		{"IPv4 client: its address", "203.0.113.7:5000", "", "203.0.113.7"},
		{"IPv6 client: its /64", "[2001:db8:1:2:3:4:5:6]:443", "", "2001:db8:1:2::/64"},
		{"IPv4-mapped IPv6: the IPv4 address", "[::ffff:203.0.113.7]:443", "", "203.0.113.7"},
		{"behind a trusted proxy: the client's /64", "10.1.2.3:443", "2001:db8:9::1", "2001:db8:9::/64"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = c.remote
			if c.xff != "" {
				r.Header.Set("X-Forwarded-For", c.xff)
			}
			if got := proxies.RateKey(r); got != c.want {
				t.Fatalf("RateKey = %q, want %q", got, c.want)
			}
		})
	}
}
