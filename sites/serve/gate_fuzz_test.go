package serve

import (
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// FuzzGateCookie: the verifier accepts exactly the values the signer
// makes for this site and key, unexpired, and nothing else; it never
// panics, and neither does the request path that reads cookies.
func FuzzGateCookie(f *testing.F) {
	key := []byte("cookie key of site-a")
	now := time.Unix(1_800_000_000, 0)
	valid := signGateCookie(key, "site-a", now.Add(time.Hour))
	for _, seed := range []string{
		valid, valid + "=", "site-a.1800003600.", "site-a..x", ".", "", "site-a.+1800003600." + valid[len(valid)-43:],
		"site-a.01800003600." + valid[len(valid)-43:], "site-b" + valid[6:], valid[:len(valid)-1],
	} {
		f.Add(seed)
	}
	m := newCookieMAC(key) // reused, as a gate reuses its MACs
	f.Fuzz(func(t *testing.T, v string) {
		if verifyGateCookie(m, "site-a", v, now) && v != valid {
			// another value may only pass if it is what the signer
			// makes for its own expiry
			var payloadExp time.Time
			if n, ok := expiryOf(v); ok {
				payloadExp = time.Unix(n, 0)
			}
			if signGateCookie(key, "site-a", payloadExp) != v {
				t.Fatalf("accepted a value the signer does not make: %q", v)
			}
		}
		req := httptest.NewRequest("GET", "http://demo.sites.test/", nil)
		req.Header.Set("Cookie", gateCookieName+"="+v)
		g := &siteGate{id: "site-a", key: key}
		_ = g.passedGate(req, now)
	})
}

// expiryOf reads the expiry field of a cookie value of the form
// "<id>.<exp>.<mac>".
func expiryOf(v string) (int64, bool) {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return 0, false
	}
	n, err := strconv.ParseInt(parts[1], 10, 64)
	return n, err == nil
}
