package forms_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"sitedrop/sites/forms"
)

func TestIsPublicIP(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		addr   string
		public bool
	}{
		// public
		{"93.184.216.34", true},
		{"8.8.8.8", true},
		{"1.1.1.1", true},
		{"2606:4700::1111", true},
		{"2a00:1450:4001:80b::200e", true},
		{"::ffff:93.184.216.34", true},
		{"64:ff9b::5db8:d822", true}, // NAT64 of 93.184.216.34
		{"2002:5db8:d822::1", true},  // 6to4 of 93.184.216.34
		{"172.32.0.1", true},         // just past 172.16/12
		{"100.128.0.1", true},        // just past CGNAT
		// unspecified, "this network"
		{"0.0.0.0", false},
		{"0.1.2.3", false},
		{"::", false},
		// loopback
		{"127.0.0.1", false},
		{"127.255.255.254", false},
		{"::1", false},
		// private
		{"10.0.0.1", false},
		{"172.16.0.1", false},
		{"172.31.255.255", false},
		{"192.168.1.1", false},
		{"fc00::1", false},
		{"fd12:3456::1", false},
		// link-local and metadata
		{"169.254.0.1", false},
		{"169.254.169.254", false},
		{"fe80::1", false},
		{"fe80::1%eth0", false},
		{"fd00:ec2::254", false},
		// CGNAT
		{"100.64.0.1", false},
		{"100.127.255.255", false},
		// multicast, broadcast, reserved
		{"224.0.0.1", false},
		{"239.255.255.250", false},
		{"ff02::1", false},
		{"ff0e::1", false},
		{"255.255.255.255", false},
		{"240.0.0.1", false},
		// documentation, benchmarking, protocol assignments
		{"192.0.2.1", false},
		{"198.51.100.7", false},
		{"203.0.113.9", false},
		{"198.18.0.1", false},
		{"198.19.255.255", false},
		{"192.0.0.8", false},
		{"2001:db8::1", false},
		{"3fff::1", false},
		{"2001::1", false}, // Teredo
		// IPv4-mapped, -translated, -compatible forms of non-public v4
		{"::ffff:127.0.0.1", false},
		{"::ffff:10.0.0.1", false},
		{"::ffff:169.254.169.254", false},
		{"::ffff:0:127.0.0.1", false},
		{"::127.0.0.1", false},
		// NAT64 and 6to4 with a non-public v4 inside
		{"64:ff9b::7f00:1", false},
		{"64:ff9b::a9fe:a9fe", false},
		{"64:ff9b::a00:1", false},
		{"64:ff9b:1::5db8:d822", false}, // local-use NAT64
		{"2002:7f00:1::1", false},
		{"2002:a9fe:a9fe::1", false},
		// other non-global IPv6
		{"fec0::1", false},
		{"100::1", false},
	} {
		a, err := netip.ParseAddr(tc.addr)
		if err != nil {
			t.Fatalf("%s: %v", tc.addr, err)
		}
		if got := forms.IsPublicIP(a); got != tc.public {
			t.Errorf("IsPublicIP(%s) = %v, want %v", tc.addr, got, tc.public)
		}
	}
	if forms.IsPublicIP(netip.Addr{}) {
		t.Error("the zero Addr is public")
	}
}

// offlineResolver answers from /etc/hosts only, so "localhost" resolves
// and everything else fails fast, without the network.
func offlineResolver() *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("no DNS in tests")
	}}
}

func TestCheckURL(t *testing.T) {
	t.Parallel()
	strict := forms.WebhookGuard{Resolver: offlineResolver()}
	lax := forms.WebhookGuard{AllowPrivate: true, Resolver: offlineResolver()}
	for _, tc := range []struct {
		name  string
		guard forms.WebhookGuard
		url   string
		want  string // substring of the message; "" = accepted
	}{
		{"public v4 literal", strict, "https://93.184.216.34/hook", ""},
		{"public v4 literal with port", strict, "http://93.184.216.34:8080/hook?x=1", ""},
		{"public v6 literal", strict, "https://[2606:4700::1111]/hook", ""},
		{"ftp", strict, "ftp://93.184.216.34/", "must use http or https"},
		{"javascript", strict, "javascript:alert(1)", "must use http or https"},
		{"no scheme", strict, "93.184.216.34/hook", "must use http or https"},
		{"empty", strict, "", "required"},
		{"unparsable", strict, "http://[::1", "not a valid URL"},
		{"no host", strict, "https:///path", "must have a host"},
		{"opaque", strict, "http:93.184.216.34", "must have a host"},
		{"userinfo", strict, "https://user:pw@93.184.216.34/", "user name or password"},
		{"user only", strict, "https://user@93.184.216.34/", "user name or password"},
		{"port zero", strict, "https://93.184.216.34:0/", "invalid port"},
		{"too long", strict, "https://93.184.216.34/" + strings.Repeat("a", 2048), "too long"},
		{"loopback literal", strict, "http://127.0.0.1:8080/", "private or reserved address (127.0.0.1)"},
		{"v6 loopback literal", strict, "http://[::1]/", "private or reserved address (::1)"},
		{"mapped loopback literal", strict, "http://[::ffff:127.0.0.1]/", "private or reserved address"},
		{"metadata literal", strict, "http://169.254.169.254/latest/meta-data/", "(169.254.169.254)"},
		{"v6 metadata literal", strict, "http://[fd00:ec2::254]/", "(fd00:ec2::254)"},
		{"private literal", strict, "https://10.1.2.3/", "(10.1.2.3)"},
		{"zoned link-local literal", strict, "http://[fe80::1%25eth0]/", "(fe80::1)"},
		{"localhost", strict, "http://localhost:3000/hook", "host resolves to a private or reserved address (127.0.0.1)"},
		{"localhost upper case", strict, "http://LOCALHOST/", "resolves to a private or reserved address"},
		{"does not resolve", strict, "https://no-such-host.invalid/hook", "does not resolve"},
		{"allow private: loopback literal", lax, "http://127.0.0.1:8080/", ""},
		{"allow private: localhost", lax, "http://localhost:3000/hook", ""},
		{"allow private: still http only", lax, "file:///etc/passwd", "must use http or https"},
		{"allow private: still must resolve", lax, "https://no-such-host.invalid/", "does not resolve"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.guard.CheckURL(context.Background(), tc.url)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var ue *forms.WebhookURLError
			if !errors.As(err, &ue) {
				t.Fatalf("got %v (%T), want a *WebhookURLError", err, err)
			}
			if !strings.Contains(ue.Msg, tc.want) || ue.Error() != ue.Msg || !strings.HasPrefix(ue.Msg, "webhook URL") {
				t.Fatalf("message %q, want it to contain %q", ue.Msg, tc.want)
			}
		})
	}
}

func TestCheckURLCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := forms.WebhookGuard{Resolver: offlineResolver()}.CheckURL(ctx, "https://example.com/")
	var ue *forms.WebhookURLError
	if err == nil || errors.As(err, &ue) || !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want the context's error", err)
	}
}

func TestHTTPClientRefusesPrivateAtConnect(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Redirect(w, r, "/elsewhere", http.StatusFound)
	}))
	defer srv.Close()

	// By IP, and by a name that resolves to it (as after a DNS change).
	byName := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	for _, u := range []string{srv.URL, byName} {
		c := forms.WebhookGuard{Resolver: offlineResolver()}.HTTPClient(2 * time.Second)
		_, err := c.Post(u, "application/json", strings.NewReader("{}"))
		var ue *forms.WebhookURLError
		if err == nil || !errors.As(err, &ue) || !strings.Contains(err.Error(), "127.0.0.1") {
			t.Fatalf("%s: got %v, want a refusal naming 127.0.0.1", u, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("server reached %d times", n)
	}

	t.Setenv("HTTP_PROXY", "http://203.0.113.1:3128")
	c := forms.WebhookGuard{AllowPrivate: true, Resolver: offlineResolver()}.HTTPClient(2 * time.Second)
	if c.Timeout != 2*time.Second {
		t.Fatalf("timeout %v", c.Timeout)
	}
	resp, err := c.Post(byName, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || hits.Load() != 1 {
		t.Fatalf("status %d after %d hits; want the redirect itself, not followed, and no proxy", resp.StatusCode, hits.Load())
	}
}
