package hooks

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"sitedrop/sites"
	"sitedrop/sites/store/s3store/s3test"
)

// TestS3StoreDeployServeCollect runs the primary on --store s3://: a
// deploy writes its blobs to the bucket, the site is served from there,
// and once deleted the collector removes them.
func TestS3StoreDeployServeCollect(t *testing.T) {
	srv := s3test.Start(t)
	url := srv.URL(srv.NewBucket(t), "content")
	app, sd := newBareApp(t, func(c *Config) { c.Store = url })
	defer app.Cleanup()
	if sd.s3 == nil {
		t.Fatal("--store s3:// did not open the S3 store")
	}
	alice := mustUser(t, app, "alice@example.com", sites.PlanFree, fixtureKey("alice"))
	html := "<!doctype html><h1>on S3</h1>"
	rec := mustDeploy(t, sd, alice, "s3site000000001", "on-store", html, "On S3")
	if code, body := siteGet(t, app, "on-store.sites.test", "/"); code != http.StatusOK || !strings.Contains(body, "<h1>on S3</h1>") {
		t.Fatalf("served %d %q", code, body)
	}
	site, err := sd.svc.LoadSite("on-store")
	if err != nil {
		t.Fatal(err)
	}
	hash := site.Files["index.html"].Hash
	if ok, err := sd.s3.Exists(context.Background(), hash); !ok || err != nil {
		t.Fatalf("index.html not in the bucket: %v", err)
	}
	if err := app.Delete(rec); err != nil {
		t.Fatal(err)
	}
	if _, err := sd.svc.CollectGarbage(context.Background(), time.Nanosecond); err != nil {
		t.Fatal(err)
	}
	var left []string
	if err := sd.s3.Walk(context.Background(), func(h string, _ time.Time) error {
		left = append(left, h)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Fatalf("blobs left after the collector: %v", left)
	}
}
