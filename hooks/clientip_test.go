package hooks

import (
	"net/http/httptest"
	"testing"
)

func TestClientIP(t *testing.T) {
	proxies, err := parseProxies([]string{"10.0.0.0/8", "192.168.1.5"})
	if err != nil {
		t.Fatal(err)
	}
	sd := &sitedrop{proxies: proxies}
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
			if got := sd.proxies.clientIP(r); got != c.want {
				t.Fatalf("clientIP = %q, want %q", got, c.want)
			}
		})
	}
	if _, err := parseProxies([]string{"nonsense"}); err == nil {
		t.Fatal("bad proxy accepted")
	}
}
