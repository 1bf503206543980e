package hooks

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
	"sitedrop/sites/domains"
	"sitedrop/sites/serve"
	"sitedrop/sites/store/s3store/s3test"
)

// TestReplicaProtectedCustomDomain: a replica gates a protected site as
// the primary does, from the published document alone (no database), at
// its own host and at a verified custom domain: 401 without the cookie,
// in with the password or the share link, and the cookie of one host is
// not sent to the other.
func TestReplicaProtectedCustomDomain(t *testing.T) {
	srv := s3test.Start(t)
	sd, done := s3App(t, srv)
	defer done()
	alice, _ := sd.app.FindAuthRecordByEmail("users", "alice@example.com")
	rec := mustDeploy(t, sd, alice, "gatesite0000001", "gate-site", "<h1>secret page</h1>", "Gate")
	hash, err := sites.HashPassword("correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	on := true
	rec, err = sd.svc.SetProtection(context.Background(), rec, sites.ProtectionChange{PasswordHash: &hash, Link: &on})
	if err != nil {
		t.Fatal(err)
	}
	col, err := sd.app.FindCollectionByNameOrId(domains.Collection)
	if err != nil {
		t.Fatal(err)
	}
	d := core.NewRecord(col)
	d.Set("domain", "private.example.org")
	d.Set("deployment", rec.Id)
	d.Set("status", domains.StatusVerified)
	d.Set("token", "tok")
	if err := sd.app.Save(d); err != nil {
		t.Fatal(err)
	}
	flush(t, sd)
	token := sites.ProtectionOf(rec).ShareToken()

	rep := startReplica(t, sd)
	rep.poll(t)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	do := func(req *http.Request, host string, cookies ...*http.Cookie) *http.Response {
		t.Helper()
		req.Host = host
		for _, c := range cookies {
			req.AddCookie(c)
		}
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	get := func(host, path string, cookies ...*http.Cookie) *http.Response {
		req, _ := http.NewRequest(http.MethodGet, rep.url+path, nil)
		return do(req, host, cookies...)
	}
	for _, host := range []string{"gate-site.sites.test", "private.example.org"} {
		if code, body := rep.get(t, host, "/"); code != http.StatusUnauthorized || strings.Contains(body, "secret page") {
			t.Fatalf("%s without a cookie: %d %q", host, code, body)
		}
	}

	// the share link at the site host: 303 to the same URL without the token, with a cookie
	resp := get("gate-site.sites.test", "/?"+serve.TokenParam+"="+token)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" || len(resp.Cookies()) != 1 {
		t.Fatalf("share link: %d, Location %q, cookies %v", resp.StatusCode, resp.Header.Get("Location"), resp.Cookies())
	}
	linkCookie := resp.Cookies()[0]
	if r := get("gate-site.sites.test", "/", linkCookie); r.StatusCode != http.StatusOK || !strings.HasPrefix(r.Header.Get("Cache-Control"), "private") {
		t.Fatalf("with the share link's cookie: %d, Cache-Control %q", r.StatusCode, r.Header.Get("Cache-Control"))
	}

	// the password at the custom domain
	form := url.Values{"password": {"wrong password"}, "next": {"/"}}
	req, _ := http.NewRequest(http.MethodPost, rep.url+serve.GatePath, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if r := do(req, "private.example.org"); r.StatusCode != http.StatusUnauthorized || len(r.Cookies()) != 0 {
		t.Fatalf("wrong password: %d, cookies %v", r.StatusCode, r.Cookies())
	}
	form.Set("password", "correct horse battery")
	req, _ = http.NewRequest(http.MethodPost, rep.url+serve.GatePath, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp = do(req, "private.example.org")
	if resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) != 1 {
		t.Fatalf("right password: %d, cookies %v", resp.StatusCode, resp.Cookies())
	}
	if r := get("private.example.org", "/", resp.Cookies()[0]); r.StatusCode != http.StatusOK {
		t.Fatalf("custom domain with its cookie: %d", r.StatusCode)
	}

	// protection removed on the primary: the replica serves the site openly
	empty := ""
	off := false
	if _, err := sd.svc.SetProtection(context.Background(), rec, sites.ProtectionChange{PasswordHash: &empty, Link: &off}); err != nil {
		t.Fatal(err)
	}
	flush(t, sd)
	rep.poll(t)
	if code, body := rep.get(t, "private.example.org", "/"); code != http.StatusOK || !strings.Contains(body, "secret page") {
		t.Fatalf("after protection was removed: %d %q", code, body)
	}
}
