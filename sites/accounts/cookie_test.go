package accounts

import (
	"crypto/tls"
	"net/http/httptest"
	"testing"
)

// TestFromOwnPages: only a browser's word that the request comes from the
// web host's own origin lets its session cookie count for the API; no
// word is no.
func TestFromOwnPages(t *testing.T) {
	for _, c := range []struct {
		name, fetchSite, origin string
		tls, secure             bool
		want                    bool
	}{
		{name: "same-origin fetch", fetchSite: "same-origin", want: true},
		{name: "same-site fetch (a site host)", fetchSite: "same-site"},
		{name: "cross-site fetch", fetchSite: "cross-site", origin: "http://web.test"},
		{name: "no headers (curl)"},
		{name: "own origin over http", origin: "http://web.test", want: true},
		{name: "own origin in capitals", origin: "HTTP://WEB.TEST", want: true},
		{name: "http origin behind TLS", origin: "http://web.test", secure: true},
		{name: "https origin behind a TLS proxy", origin: "https://web.test", secure: true, want: true},
		{name: "https origin over TLS", origin: "https://web.test", tls: true, want: true},
		{name: "a site host's origin", origin: "http://site.web.test"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "http://web.test/deploy", nil)
			if c.fetchSite != "" {
				r.Header.Set("Sec-Fetch-Site", c.fetchSite)
			}
			if c.origin != "" {
				r.Header.Set("Origin", c.origin)
			}
			if c.tls {
				r.TLS = &tls.ConnectionState{}
			}
			if got := fromOwnPages(r, c.secure); got != c.want {
				t.Fatalf("fromOwnPages = %v, want %v", got, c.want)
			}
		})
	}
}

// TestParseEmail: a bare address, normalised; anything else refused with
// the reason.
func TestParseEmail(t *testing.T) {
	for in, want := range map[string]error{
		"":                               ErrEmailRequired,
		" Ada@Example.COM ":              nil,
		"Ada <ada@example.com>":          ErrEmailInvalid,
		"not an address":                 ErrEmailInvalid,
		"a@b@example.com":                ErrEmailInvalid,
		"x@" + string(make([]byte, 260)): ErrEmailInvalid,
	} {
		got, err := ParseEmail(in)
		if err != want {
			t.Errorf("ParseEmail(%q) error = %v, want %v", in, err, want)
		}
		if err == nil && got != "ada@example.com" {
			t.Errorf("ParseEmail(%q) = %q", in, got)
		}
	}
	if !ValidCodeID(NewRecordID()) || ValidCodeID("ABCDEFGHIJKLMNO") || ValidCodeID("short") {
		t.Error("ValidCodeID does not tell record ids")
	}
}
