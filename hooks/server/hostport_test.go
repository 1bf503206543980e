package server

import "testing"

// TestSplitHostPort: a Host header's name, lower-case and without the
// root's dot, and its port; a host that does not split is all name.
func TestSplitHostPort(t *testing.T) {
	for _, tt := range []struct{ in, host, port string }{
		{"Shop.Example.", "shop.example", ""},
		{"shop.example:8443", "shop.example", "8443"},
		{"[::1]:80", "::1", "80"},
		{"a:b:c", "a:b:c", ""},
	} {
		if h, p := SplitHostPort(tt.in); h != tt.host || p != tt.port {
			t.Errorf("SplitHostPort(%q) = %q, %q; want %q, %q", tt.in, h, p, tt.host, tt.port)
		}
	}
}

// TestPublicHTTPSPort: the port of https public URLs only, "" for 443.
func TestPublicHTTPSPort(t *testing.T) {
	for _, tt := range []struct {
		in, port string
		ok       bool
	}{
		{"", "", false},
		{"http://example.com:8080", "", false},
		{"https://example.com", "", true},
		{"https://example.com:443", "", true},
		{"https://example.com:8443", "8443", true},
		{"https://%zz", "", false},
	} {
		if p, ok := PublicHTTPSPort(tt.in); p != tt.port || ok != tt.ok {
			t.Errorf("PublicHTTPSPort(%q) = %q, %v; want %q, %v", tt.in, p, ok, tt.port, tt.ok)
		}
	}
}
