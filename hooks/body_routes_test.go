package hooks

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestSlowBodiesEveryRoute: every body the API and the pages read, not
// only deploys and uploads, is read at the minimum rate: a trickle is
// refused with 408 after the grace instead of holding its connection (and
// the memory its bytes take) for as long as the client likes. The API
// answers {"error"}, a page its error page.
func TestSlowBodiesEveryRoute(t *testing.T) {
	app, sd := newFixtureApp(t)
	sd.BodyGrace, sd.BodyMinRate = 300*time.Millisecond, 1024
	srv := httptest.NewServer(newMux(t, app))
	t.Cleanup(srv.Close) // after the connections' own cleanups
	const tooSlow = `{"error":"Request body too slow: after 300ms it must arrive at 1 KiB a second or more"}`
	for _, c := range []struct {
		method, path, contentType, key, first string
		page                                  bool
	}{
		{"POST", "/auth/otp", "application/json", "", `{"email":"`, false},
		{"POST", "/auth/verify", "application/json", "", `{"otp_id":"`, false},
		{"POST", "/deploy/claim", "application/json", keyPia, `{"slug":"`, false},
		{"POST", "/blobs/missing", "application/json", keyPia, `{"hashes":[`, false},
		{"POST", "/deploy/" + idAliceSite + "/rollback", "application/json", keyAlice, `{"version":`, false},
		{"POST", "/deploy/" + idAliceSite + "/domains", "application/json", keyAlice, `{"domain":"`, false},
		{"POST", "/webhooks/" + idAliceSite, "application/json", keyAlice, `{"url":"`, false},
		{"PUT", "/notifications/" + idAliceSite, "application/json", keyAlice, `{"email":`, false},
		{"POST", "/submit/" + idAliceSite, "application/json", "", `{"name":"`, false},
		{"POST", "/submit/" + idAliceSite, "application/x-www-form-urlencoded", "", `name=`, false},
		{"POST", "/auth/login", "application/x-www-form-urlencoded", "", `email=`, true},
		{"POST", "/report", "application/json", "", `{"url":"`, false},
		{"POST", "/report", "application/x-www-form-urlencoded", "", `url=`, true},
	} {
		conn := rawRequest(t, srv, c.method, c.path, c.contentType, c.key, 1000, c.first)
		res, body := readRaw(t, conn)
		if res.StatusCode != http.StatusRequestTimeout || (!c.page && strings.TrimSpace(body) != tooSlow) {
			t.Errorf("%s %s (%s): %d %.300s", c.method, c.path, c.contentType, res.StatusCode, body)
		}
	}
	if n := sd.Memory.InUse(); n != 0 {
		t.Errorf("%d bytes of the memory budget still held", n)
	}
}
