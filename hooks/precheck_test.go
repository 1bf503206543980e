package hooks

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
)

// TestPrecheckCreateRefusesWhatTheTransactionRefuses: the precheck (one
// statement for the usual case, the exact checks for a slug it finds)
// refuses a slug exactly when Create's transaction would: a live site's,
// a renamed site's kept old slug, not an expired anonymous site's nor an
// expired redirect's; and an unknown owner is an error of both.
func TestPrecheckCreateRefusesWhatTheTransactionRefuses(t *testing.T) {
	app, sd := newBareApp(t)
	defer app.Cleanup()
	svc := sd.svc
	setup := mustUser(t, app, "pia@example.com", sites.PlanFree, keyPia)
	owner := mustUser(t, app, "bob@example.com", sites.PlanFree, keyBob)
	ctx := context.Background()
	create := func(p sites.CreateParams) *sites.Created {
		t.Helper()
		p.Upload = onePage(p.Slug)
		c, err := svc.Create(ctx, p)
		if err != nil {
			t.Fatalf("create %s: %v", p.Slug, err)
		}
		return c
	}
	past := sites.DBTime(time.Now().Add(-time.Hour))
	create(sites.CreateParams{Owner: setup, Slug: "live-site"})
	anon := create(sites.CreateParams{Slug: "expired-anon", AnonTTL: time.Hour})
	if _, err := app.DB().Update(sites.DeploymentsCollection, dbx.Params{sites.FieldExpiresAt: past}, dbx.HashExp{"id": anon.Record.Id}).Execute(); err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct{ from, to string }{{"kept-name", "kept-new"}, {"gone-name", "gone-new"}} {
		c := create(sites.CreateParams{Owner: setup, Slug: r.from})
		if _, err := svc.Rename(ctx, c.Record, r.to); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := app.DB().Update(sites.SlugRedirectsCollection, dbx.Params{sites.FieldRedirectExpiresAt: past}, dbx.HashExp{sites.FieldRedirectSlug: "gone-name"}).Execute(); err != nil {
		t.Fatal(err)
	}
	unknown := core.NewRecord(owner.Collection())
	unknown.Id = "unknownowner123"

	for _, tc := range []struct {
		name  string
		owner *core.Record
		slug  string
		want  error // nil: allowed; errAny: any error
	}{
		{"free slug", owner, "fresh-site", nil},
		{"free slug, anonymous", nil, "fresh-anon", nil},
		{"generated slug", owner, "", nil},
		{"generated slug, anonymous", nil, "", nil},
		{"a live site's slug", owner, "live-site", sites.ErrSlugTaken},
		{"a live site's slug, anonymous", nil, "live-site", sites.ErrSlugTaken},
		{"an expired anonymous site's slug", owner, "expired-anon", nil},
		{"a renamed site's kept slug", owner, "kept-name", sites.ErrSlugTaken},
		{"an expired redirect's slug", owner, "gone-name", nil},
		{"a renamed site's new slug", owner, "kept-new", sites.ErrSlugTaken},
		{"an unknown owner", unknown, "unknown-owner", errAny},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pre := svc.PrecheckCreate(tc.owner, tc.slug)
			_, got := svc.Create(ctx, sites.CreateParams{Owner: tc.owner, Slug: tc.slug, AnonTTL: time.Hour,
				Prechecked: true, Upload: onePage("x")})
			for what, err := range map[string]error{"precheck": pre, "transaction": got} {
				switch {
				case tc.want == errAny && err == nil:
					t.Errorf("%s allowed it, want an error", what)
				case tc.want != errAny && !errors.Is(err, tc.want) && (tc.want != nil || err != nil):
					t.Errorf("%s: %v, want %v", what, err, tc.want)
				}
			}
		})
	}
}

// errAny stands for any error in a table of wanted errors.
var errAny = errors.New("any error")

// onePage is an upload of one small page.
func onePage(text string) sites.Upload {
	return sites.Upload{StorageType: sites.StorageFiles, Files: []sites.File{{Path: "index.html", ContentType: "text/html; charset=utf-8", Data: []byte("<p>" + text + "</p>")}}}
}
