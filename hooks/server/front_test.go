package server

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"sitedrop/sites"
)

// slugServer answers with the slug it was asked for, or panics for the
// slug "boom".
type slugServer struct{}

func (slugServer) ServeSite(w http.ResponseWriter, _ *http.Request, slug string) {
	if slug == "boom" {
		panic("boom")
	}
	if slug == "" {
		slug = "\x00"
	}
	io.WriteString(w, "site "+slug)
}

var _ SiteServer = slugServer{}

// TestFrontHandle: the one host split, on its own: site hosts go to the
// site server, malformed hosts are refused, custom domains are asked,
// unknown hosts are refused on the listener only, and the web host's
// names (its domain, the listen and public hosts, localhost, addresses)
// fall through to the router.
func TestFrontHandle(t *testing.T) {
	f := &Front{
		Hosts: sites.NewHostSplit("web.test", "sites.test"),
		Sites: slugServer{},
		CustomDomain: func(w http.ResponseWriter, r *http.Request) bool {
			if r.Host != "shop.custom.test" {
				return false
			}
			io.WriteString(w, "custom")
			return true
		},
		ListenHost: "devbox",
		PublicHost: PublicHostOf("https://Deploy.Example.com:8443/x"),
		Logger:     slog.New(slog.DiscardHandler),
	}
	for _, c := range []struct {
		host, path    string
		refuseUnknown bool
		handled       bool
		status        int
		body          string // in the answer
	}{
		{"alice.sites.test", "/", false, true, 200, "site alice"},
		{"ALICE.sites.test:8090", "/", true, true, 200, "site alice"},
		{"boom.sites.test", "/", true, true, 500, "Internal error\n"},
		{"V12--Alice.sites.test", "/", true, true, 200, "site v12--alice"},
		{"staging--alice.sites.test", "/", true, true, 200, "site staging--alice"},
		{"v012--alice.sites.test", "/", true, true, 200, "site \x00"},   // a site host naming no site
		{"v12--shop.custom.test", "/", true, true, 421, "unknown host"}, // custom domains have no previews
		{"alice.sites.test.", "/", true, true, 400, "Invalid Host header"},
		{"web.test:", "/", false, true, 400, "Invalid Host header"},
		{"shop.custom.test", "/", true, true, 200, "custom"},
		{"web.test", "/", true, false, 200, ""},
		{"www.web.test", "/", true, false, 200, ""},
		{"devbox:8090", "/", true, false, 200, ""},
		{"deploy.example.com", "/", true, false, 200, ""},
		{"localhost", "/", true, false, 200, ""},
		{"127.0.0.1:8090", "/", true, false, 200, ""},
		{"[::1]:8090", "/", true, false, 200, ""},
		{"", "/", true, false, 200, ""},
		{"evil.example", "/api/health", true, false, 200, ""},
		{"evil.example", "/", true, true, 421, `{"error":"unknown host"}` + "\n"},
		{"evil.example", "/", false, false, 200, ""},
	} {
		req := httptest.NewRequest(http.MethodGet, "http://placeholder"+c.path, nil)
		req.Host = c.host
		rec := httptest.NewRecorder()
		handled := f.Handle(rec, req, c.refuseUnknown)
		if handled != c.handled || rec.Code != c.status || !strings.Contains(rec.Body.String(), c.body) {
			t.Errorf("Host %q %s (refuse unknown %v) = %v %d %q, want %v %d %q",
				c.host, c.path, c.refuseUnknown, handled, rec.Code, rec.Body.String(), c.handled, c.status, c.body)
		}
	}
}
