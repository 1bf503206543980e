package sites_test

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/pocketbase/dbx"

	"sitedrop/sites"
	"sitedrop/sites/store"
)

// TestUpdateSettings: a change of title, description or favicon makes a
// new version rebuilt from the live one's original bytes (the submit URL
// placeholder replaced again, the old head tags gone); SPA alone or no
// change makes none.
func TestUpdateSettings(t *testing.T) {
	str := func(s string) *string { return &s }
	yes := true
	cases := []struct {
		name        string
		meta        sites.Metadata
		changed     bool
		versions    int
		wantHTML    []string
		notWantHTML []string
		spa         bool
	}{
		{name: "new title", meta: sites.Metadata{Title: str("New title")}, changed: true, versions: 2,
			wantHTML:    []string{"<title>New title</title>", `action="https://forms.test/submit/`, `content="Old desc"`},
			notWantHTML: []string{"Old title", "{{SUBMIT_URL}}"}},
		{name: "favicon and description", meta: sites.Metadata{Favicon: str("🐙"), Description: str("")}, changed: true, versions: 2,
			wantHTML: []string{"<title>Old title</title>", `rel="icon"`}, notWantHTML: []string{"Old desc"}},
		{name: "SPA only", meta: sites.Metadata{IsSPA: &yes}, changed: true, versions: 1, spa: true,
			wantHTML: []string{"<title>Old title</title>"}},
		{name: "same values", meta: sites.Metadata{Title: str("Old title")}, changed: false, versions: 1,
			wantHTML: []string{"<title>Old title</title>"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			app, _ := newService(t)
			blobStore, err := store.NewFSStore(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			svc := sites.NewService(app, blobStore, sites.ServiceConfig{
				SubmitURL: func(id string) string { return "https://forms.test/submit/" + id },
			})
			ctx := context.Background()
			c, err := svc.Create(ctx, sites.CreateParams{Owner: mustOwner(t, app), Slug: "set-site",
				Meta: sites.Metadata{Title: str("Old title"), Description: str("Old desc")},
				Upload: files("index.html", `<html><head></head><body><form action="{{SUBMIT_URL}}"></form></body></html>`,
					"a/b.css", "body{}")})
			if err != nil {
				t.Fatal(err)
			}
			out, changed, err := svc.UpdateSettings(ctx, c.Record, tc.meta)
			if err != nil {
				t.Fatal(err)
			}
			if changed != tc.changed {
				t.Errorf("changed = %v", changed)
			}
			if out.GetBool("is_spa") != tc.spa {
				t.Errorf("is_spa = %v", out.GetBool("is_spa"))
			}
			if tc.meta.Title != nil && out.GetString("title") != *tc.meta.Title {
				t.Errorf("title = %q", out.GetString("title"))
			}
			n, _ := app.CountRecords(sites.VersionsCollection, dbx.HashExp{"deployment": c.Record.Id})
			if int(n) != tc.versions {
				t.Errorf("%d versions, want %d", n, tc.versions)
			}
			site, err := svc.LoadSite("set-site")
			if err != nil {
				t.Fatal(err)
			}
			if len(site.Files) != 2 || site.Files["a/b.css"].Type == "" {
				t.Fatalf("files = %v", site.Files)
			}
			b, err := svc.Store().Open(ctx, site.Files["index.html"].Hash)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			raw, _ := io.ReadAll(b)
			html := string(raw)
			for _, w := range tc.wantHTML {
				if !strings.Contains(html, w) {
					t.Errorf("index.html lacks %q: %s", w, html)
				}
			}
			for _, w := range tc.notWantHTML {
				if strings.Contains(html, w) {
					t.Errorf("index.html has %q: %s", w, html)
				}
			}
		})
	}
}
