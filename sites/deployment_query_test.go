package sites_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"sitedrop/sites"
)

// TestFindVersionHead reads a version as FindVersionOf does, every field
// but the manifest, and refuses another deployment's version alike.
func TestFindVersionHead(t *testing.T) {
	app, svc := newService(t)
	ctx := context.Background()
	title, desc, icon, spa := "Head", "A head", "🚀", true // every field set: a column not read shows
	upload := files("index.html", "<p>one</p>", "a.css", "p{}")
	upload.Release.Message = "first"
	c, err := svc.Create(ctx, sites.CreateParams{Slug: "head-site", AnonTTL: time.Hour,
		Meta: sites.Metadata{Title: &title, Description: &desc, Favicon: &icon, IsSPA: &spa}, Upload: upload})
	if err != nil {
		t.Fatal(err)
	}
	other, err := svc.Create(ctx, sites.CreateParams{Slug: "other-site", AnonTTL: time.Hour, Upload: files("index.html", "<p>two</p>")})
	if err != nil {
		t.Fatal(err)
	}
	full, err := sites.FindVersionOf(app, c.Record.Id, c.Version.Id)
	if err != nil {
		t.Fatal(err)
	}
	head, err := sites.FindVersionHead(app, c.Record.Id, c.Version.Id)
	if err != nil {
		t.Fatal(err)
	}
	if m := head.GetString(sites.FieldVersionManifest); head.Id != full.Id || m != "" && m != "null" {
		t.Fatalf("head %s with manifest %q", head.Id, head.GetString(sites.FieldVersionManifest))
	}
	for _, f := range []string{sites.FieldVersionDeployment, sites.FieldVersionNumber, sites.FieldVersionFileCount,
		sites.FieldVersionTotalBytes, sites.FieldVersionTitle, sites.FieldVersionStorageType, sites.FieldVersionCreated} {
		if got, want := head.GetString(f), full.GetString(f); got != want || want == "" {
			t.Errorf("%s: %q, want %q", f, got, want)
		}
	}
	for _, f := range full.Collection().Fields.FieldNames() { // a field added later must be read too
		if f == sites.FieldVersionManifest {
			continue
		}
		if got, want := fmt.Sprint(head.Get(f)), fmt.Sprint(full.Get(f)); got != want || want == "" || want == "false" {
			t.Errorf("%s: %q, want %q (every field but the manifest is read)", f, got, want)
		}
	}
	if _, err := sites.FindVersionHead(app, other.Record.Id, c.Version.Id); !errors.Is(err, sites.ErrNotFound) {
		t.Errorf("another deployment's version: %v, want ErrNotFound", err)
	}
	if _, err := sites.FindVersionHead(app, c.Record.Id, "nosuchversion00"); !errors.Is(err, sites.ErrNotFound) {
		t.Errorf("no such version: %v, want ErrNotFound", err)
	}
}
