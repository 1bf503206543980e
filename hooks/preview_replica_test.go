package hooks

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"sitedrop/sites"
	"sitedrop/sites/publish"
	"sitedrop/sites/store/s3store"
	"sitedrop/sites/store/s3store/s3test"
)

// TestReplicaServesPreviews: the primary publishes a document per kept
// version and per alias (the change feed names them), so a replica
// serves each preview host with that version, noindex; a draft is served
// at its preview host and not at the site's; an alias that moves and a
// version pruned reach the replica on its next poll; the documents stay
// one per kept version and alias.
func TestReplicaServesPreviews(t *testing.T) {
	srv := s3test.Start(t)
	url := srv.URL(srv.NewBucket(t), "sd")
	app, sd := newBareApp(t, func(c *Config) { c.Store, c.KeepVersions = url, 2 })
	defer app.Cleanup()
	mustUser(t, app, "alice@example.com", sites.PlanPro, fixtureKey("alice"))
	ctx := context.Background()
	rep := startReplica(t, sd)
	alice, _ := sd.app.FindAuthRecordByEmail("users", "alice@example.com")
	c, err := sd.svc.Create(ctx, sites.CreateParams{Owner: alice, Slug: "rep-prev", Upload: bigSite("one")})
	if err != nil {
		t.Fatal(err)
	}
	draft := bigSite("two")
	draft.Release = sites.Release{Draft: true, Alias: "staging"}
	if _, err := sd.svc.Replace(ctx, c.Record, sites.Metadata{}, draft); err != nil {
		t.Fatal(err)
	}
	flush(t, sd)
	rep.poll(t)
	want := func(host, content string, status int) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, rep.url+"/", nil)
		req.Host = host
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b := make([]byte, 4096)
		n, _ := res.Body.Read(b)
		body := string(b[:n])
		if res.StatusCode != status || !strings.Contains(body, content) {
			t.Fatalf("replica %s: %d %.60q, want %d %q", host, res.StatusCode, body, status, content)
		}
		if preview := strings.Contains(host, "--"); preview != (res.Header.Get("X-Robots-Tag") == "noindex") {
			t.Errorf("replica %s: X-Robots-Tag %q", host, res.Header.Get("X-Robots-Tag"))
		}
	}
	want("rep-prev.sites.test", "<h1>one</h1>", 200)
	want("v1--rep-prev.sites.test", "<h1>one</h1>", 200)
	want("v2--rep-prev.sites.test", "<h1>two</h1>", 200)
	want("staging--rep-prev.sites.test", "<h1>two</h1>", 200)
	want("v3--rep-prev.sites.test", "", 404)
	if d := published(t, sd, "rep-prev.sites.test"); d == nil || !slices.Equal(d.Previews,
		[]string{"staging--rep-prev.sites.test", "v1--rep-prev.sites.test", "v2--rep-prev.sites.test"}) {
		t.Fatalf("the site's document lists previews %v", d.Previews)
	}
	data, _, err := sd.s3.GetObject(ctx, publish.FeedKey)
	if err != nil {
		t.Fatal(err)
	}
	feed, err := publish.ParseFeed(data)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(feed.Changes, func(c publish.Change) bool { return c.Host == "staging--rep-prev.sites.test" }) {
		t.Errorf("the change feed does not name the alias's document: %+v", feed.Changes)
	}
	if d := published(t, sd, "v2--rep-prev.sites.test"); d == nil || d.Site.Preview != "v2" || len(d.Previews) != 0 {
		t.Fatalf("v2's document: %+v", d)
	}

	// Three more live deploys: the alias stays on 2 (kept), 1 is pruned.
	for _, v := range []string{"thr", "fou", "fiv"} {
		if _, err := sd.svc.Replace(ctx, c.Record, sites.Metadata{}, bigSite(v)); err != nil {
			t.Fatal(err)
		}
	}
	flush(t, sd)
	rep.poll(t)
	want("rep-prev.sites.test", "<h1>fiv</h1>", 200)
	want("v1--rep-prev.sites.test", "", 404)
	want("staging--rep-prev.sites.test", "<h1>two</h1>", 200)
	want("v5--rep-prev.sites.test", "<h1>fiv</h1>", 200)
	labels, err := sites.PreviewLabels(sd.app, c.Record.Id, "rep-prev")
	if err != nil {
		t.Fatal(err)
	}
	wantDocs := []string{"rep-prev.sites.test"}
	for _, l := range labels {
		wantDocs = append(wantDocs, l+".sites.test")
	}
	slices.Sort(wantDocs)
	var docs []string
	if err := sd.s3.ListObjects(ctx, publish.SitesPrefix, func(o s3store.ObjectInfo) error {
		if h, ok := publish.HostOfKey(o.Key); ok {
			docs = append(docs, h)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(docs)
	if !slices.Equal(docs, wantDocs) || slices.Contains(docs, "v1--rep-prev.sites.test") {
		t.Fatalf("published documents %v: want the site's, one per kept version and one per alias: %v", docs, wantDocs)
	}
}
