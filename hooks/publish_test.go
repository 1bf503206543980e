package hooks

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
	"sitedrop/sites/domains"
	"sitedrop/sites/publish"
	"sitedrop/sites/store/s3store"
	"sitedrop/sites/store/s3store/s3test"
)

// s3App is a primary on a fresh bucket of srv, with alice.
func s3App(t *testing.T, srv *s3test.Server) (*built, func()) {
	t.Helper()
	url := srv.URL(srv.NewBucket(t), "sd")
	app, sd := newBareApp(t, func(c *Config) { c.Store = url })
	mustUser(t, app, "alice@example.com", sites.PlanPro, fixtureKey("alice"))
	if sd.publisher == nil {
		t.Fatal("no publisher with --store s3://")
	}
	return sd, app.Cleanup
}

// published reads host's document, nil when there is none.
func published(t *testing.T, sd *built, host string) *publish.Document {
	t.Helper()
	data, _, err := sd.s3.GetObject(context.Background(), publish.Key(host))
	if errors.Is(err, s3store.ErrNotFound) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	d, err := publish.ParseDocument(data)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func flush(t *testing.T, sd *built) {
	t.Helper()
	if err := sd.publisher.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestPublishManifests: every change of a deployment, once committed,
// replaces its published document (whole Site, growing generation);
// dropped blobs are spared for the replicas; a delete removes it.
func TestPublishManifests(t *testing.T) {
	srv := s3test.Start(t)
	sd, done := s3App(t, srv)
	defer done()
	ctx := context.Background()
	alice, _ := sd.app.FindAuthRecordByEmail("users", "alice@example.com")
	rec := mustDeploy(t, sd, alice, "pubsite00000001", "pub-site", "<h1>one</h1>", "One")
	if sd.publisher.Settled() {
		t.Fatal("settled before the change was published")
	}
	flush(t, sd)
	const host = "pub-site.sites.test"
	d1 := published(t, sd, host)
	if d1 == nil || d1.Site.Slug != "pub-site" || d1.Site.ID != rec.Id || d1.Host != host || len(d1.Hosts) != 1 || d1.Generation <= 0 {
		t.Fatalf("first document: %+v", d1)
	}
	oldHash := d1.Site.Files["index.html"].Hash
	live, _ := sd.svc.LoadSite("pub-site")
	if d1.Site.VersionID != live.VersionID || d1.Site.Status != sites.StatusActive {
		t.Fatalf("document %+v, live %+v", d1.Site, live)
	}

	// a replace: a new generation; the old page's blob is spared
	if _, err := sd.svc.Replace(ctx, rec, sites.Metadata{}, htmlUpload("<h1>two</h1>")); err != nil {
		t.Fatal(err)
	}
	flush(t, sd)
	d2 := published(t, sd, host)
	if d2.Generation <= d1.Generation || d2.Site.Files["index.html"].Hash == oldHash {
		t.Fatalf("after a replace: generation %d → %d, index %s", d1.Generation, d2.Generation, d2.Site.Files["index.html"].Hash)
	}
	spared := false
	sd.s3.Walk(ctx, func(h string, mod time.Time) error {
		if h == oldHash && mod.After(time.Now().Add(10*time.Minute)) {
			spared = true
		}
		return nil
	})
	if !spared {
		t.Fatal("the replaced page's blob is not spared for the replicas")
	}
	// nothing changed: nothing written
	sd.publisher.Mark("pub-site")
	flush(t, sd)
	if d := published(t, sd, host); d.Generation != d2.Generation {
		t.Fatal("an unchanged site was written again")
	}

	// disabled: the document says so (replicas answer 404)
	rec, _ = sd.app.FindRecordById(sites.DeploymentsCollection, rec.Id)
	rec.Set("status", "disabled")
	if err := sd.app.Save(rec); err != nil {
		t.Fatal(err)
	}
	flush(t, sd)
	if d := published(t, sd, host); d.Site.Status != "disabled" {
		t.Fatalf("status %q after disabling", d.Site.Status)
	}

	if err := sd.app.Delete(rec); err != nil {
		t.Fatal(err)
	}
	flush(t, sd)
	if d := published(t, sd, host); d != nil {
		t.Fatal("a deleted site is still published")
	}
	// its blobs outlive it by the retention, for replicas not yet told
	res, err := sd.svc.CollectGarbage(ctx, time.Nanosecond)
	if err != nil || res.Removed != 0 {
		t.Fatalf("the collector removed %d blobs of a just-deleted site (%v)", res.Removed, err)
	}
}

// TestPublishSurvivesStoreDown: a publish that fails after the commit
// stays due and happens once the store is back; meanwhile the collector
// waits. A reconcile publishes what no change marked and removes
// documents of no site.
func TestPublishSurvivesStoreDown(t *testing.T) {
	srv := s3test.Start(t)
	sd, done := s3App(t, srv)
	defer done()
	ctx := context.Background()
	if err := sd.publisher.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if !sd.publisher.Settled() {
		t.Fatal("not settled after a reconcile of nothing")
	}
	alice, _ := sd.app.FindAuthRecordByEmail("users", "alice@example.com")
	mustDeploy(t, sd, alice, "pubsite00000002", "down-site", "<h1>x</h1>", "X")
	sd.upkeep.TakeDue()
	srv.Stop()
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	err := sd.publisher.Flush(sctx)
	cancel()
	if err == nil {
		t.Fatal("a publish to a stopped store succeeded")
	}
	if sd.publisher.Settled() {
		t.Fatal("a failed publish was dropped")
	}
	sd.jobs.Run(sd.upkeep.Collect)
	if !sd.upkeep.TakeDue() {
		t.Fatal("the collector ran before a committed change was published")
	}
	srv.Restart(t)
	flush(t, sd)
	if published(t, sd, "down-site.sites.test") == nil || !sd.publisher.Settled() {
		t.Fatal("not published once the store was back")
	}

	// an orphan document and a lost one: the reconcile repairs both
	orphan := []byte(`{"generation":1,"host":"gone.sites.test","hosts":["gone.sites.test"],"site":{"ID":"x","Slug":"gone","Files":{}}}`)
	if _, err := sd.s3.PutObject(ctx, publish.Key("gone.sites.test"), orphan, s3store.Condition{}); err != nil {
		t.Fatal(err)
	}
	if err := sd.s3.DeleteObject(ctx, publish.Key("down-site.sites.test")); err != nil {
		t.Fatal(err)
	}
	if err := sd.publisher.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if published(t, sd, "gone.sites.test") != nil || published(t, sd, "down-site.sites.test") == nil {
		t.Fatal("the reconcile did not repair the documents")
	}
}

// TestPublishCustomDomains: a verified custom domain is published beside
// the site's own host, so replicas serve it too; a pending one is not;
// removing the domain, or deleting the site, removes its document.
func TestPublishCustomDomains(t *testing.T) {
	srv := s3test.Start(t)
	sd, done := s3App(t, srv)
	defer done()
	alice, _ := sd.app.FindAuthRecordByEmail("users", "alice@example.com")
	rec := mustDeploy(t, sd, alice, "pubdomain000001", "dom-site", "<h1>dom</h1>", "Dom")
	col, err := sd.app.FindCollectionByNameOrId(domains.Collection)
	if err != nil {
		t.Fatal(err)
	}
	claim := func(name, status string) *core.Record {
		d := core.NewRecord(col)
		d.Set("domain", name)
		d.Set("deployment", rec.Id)
		d.Set("status", status)
		d.Set("token", "tok-"+name)
		if err := sd.app.Save(d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	verified := claim("docs.example.org", domains.StatusVerified)
	claim("pending.example.org", domains.StatusPending)
	flush(t, sd)
	own := published(t, sd, "dom-site.sites.test")
	custom := published(t, sd, "docs.example.org")
	if own == nil || custom == nil || custom.Site.ID != rec.Id || !slices.Equal(own.Hosts, []string{"dom-site.sites.test", "docs.example.org"}) {
		t.Fatalf("published: own %+v, custom %+v", own, custom)
	}
	if d := published(t, sd, "pending.example.org"); d != nil {
		t.Fatal("a pending domain was published")
	}

	if err := sd.app.Delete(verified); err != nil {
		t.Fatal(err)
	}
	flush(t, sd)
	if d := published(t, sd, "docs.example.org"); d != nil {
		t.Fatal("a removed domain is still published")
	}

	claim("docs.example.org", domains.StatusVerified)
	flush(t, sd)
	if published(t, sd, "docs.example.org") == nil {
		t.Fatal("a domain verified again is not published")
	}

	// the domains cannot be read (the database busy): the publish fails
	// and stays due, and nothing is unpublished, by a publish or a reconcile
	failing := publish.New(publish.Config{
		Objects: sd.s3, Load: sd.svc.LoadSite, Slugs: func() ([]string, error) { return sites.AllSlugs(sd.app) }, SiteHost: sd.hosts.SiteHost,
		ExtraHosts: func(string) ([]string, error) { return nil, errors.New("database is locked") },
		Keep:       sd.s3.KeepUntil, Retention: sd.cfg.ReplicaRetention, Logger: sd.app.Logger(),
	})
	failing.Mark("dom-site")
	if err := failing.Flush(context.Background()); err == nil || !strings.Contains(err.Error(), "database is locked") {
		t.Fatalf("flush with unreadable domains: %v", err)
	}
	if failing.Settled() {
		t.Fatal("a failed publish is not due any more")
	}
	if err := failing.Reconcile(context.Background()); err == nil {
		t.Fatal("a reconcile with unreadable domains succeeded")
	}
	if published(t, sd, "docs.example.org") == nil {
		t.Fatal("a failure to read the domains unpublished the custom domain")
	}
	if err := sd.app.Delete(rec); err != nil {
		t.Fatal(err)
	}
	flush(t, sd)
	if d := published(t, sd, "docs.example.org"); d != nil {
		t.Fatal("the domain of a deleted site is still published")
	}
}
