package hooks

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
	"sitedrop/sites/domains"
	"sitedrop/sites/store/s3store/s3test"
)

// TestTakedownOnReplica: a takedown reaches a replica (no database) in
// the published documents: every host that served the site (its slug, a
// preview, a verified custom domain, the old slug of a rename) answers
// the 410 page with the reason, and serves the site again once restored.
func TestTakedownOnReplica(t *testing.T) {
	srv := s3test.Start(t)
	sd, done := s3App(t, srv)
	defer done()
	ctx := context.Background()
	alice, _ := sd.app.FindAuthRecordByEmail("users", "alice@example.com")
	c, err := sd.svc.Create(ctx, sites.CreateParams{Owner: alice, Slug: "td-old", Upload: bigSite("one")})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := sd.svc.Rename(context.Background(), c.Record, "td-site")
	if err != nil {
		t.Fatal(err)
	}
	col, err := sd.app.FindCollectionByNameOrId(domains.Collection)
	if err != nil {
		t.Fatal(err)
	}
	d := core.NewRecord(col)
	d.Set("domain", "td.example.org")
	d.Set("deployment", rec.Id)
	d.Set("status", domains.StatusVerified)
	d.Set("token", "tok")
	if err := sd.app.Save(d); err != nil {
		t.Fatal(err)
	}
	flush(t, sd)
	rep := startReplica(t, sd)
	rep.poll(t)
	hosts := []string{"td-site.sites.test", "v1--td-site.sites.test", "td.example.org"}
	for _, host := range hosts {
		if code, body := rep.get(t, host, "/"); code != http.StatusOK || !strings.Contains(body, "<h1>one</h1>") {
			t.Fatalf("before: %s: %d %.80q", host, code, body)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, rep.url+"/", nil)
	req.Host = "td-old.sites.test"
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if res, err := noRedirect.Do(req); err != nil || res.StatusCode != http.StatusMovedPermanently {
		t.Fatalf("before: the old slug: %v %v", res, err)
	} else {
		res.Body.Close()
	}

	if _, err := sd.svc.TakeDown(t.Context(), rec, "malware & phishing", "admin@example.com"); err != nil {
		t.Fatal(err)
	}
	flush(t, sd)
	rep.poll(t)
	for _, host := range append(hosts, "td-old.sites.test") {
		code, body := rep.get(t, host, "/big.bin")
		if code != http.StatusGone || !strings.Contains(body, "This site was taken down for: malware &amp; phishing") {
			t.Fatalf("taken down: %s: %d %.80q", host, code, body)
		}
	}

	if _, err := sd.svc.Restore(t.Context(), rec); err != nil {
		t.Fatal(err)
	}
	flush(t, sd)
	rep.poll(t)
	for _, host := range hosts {
		if code, body := rep.get(t, host, "/"); code != http.StatusOK || !strings.Contains(body, "<h1>one</h1>") {
			t.Fatalf("restored: %s: %d %.80q", host, code, body)
		}
	}
}
