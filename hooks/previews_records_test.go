package hooks

import (
	"testing"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
)

// TestDashboardAliasRules: an alias saved in the dashboard follows the
// API's rules: a valid name, a version of its own deployment.
func TestDashboardAliasRules(t *testing.T) {
	app, _ := newFixtureApp(t)
	alice, _ := app.FindRecordById(sites.DeploymentsCollection, idAliceSite)
	bob, _ := app.FindRecordById(sites.DeploymentsCollection, idBobSite)
	col, err := app.FindCollectionByNameOrId(sites.AliasesCollection)
	if err != nil {
		t.Fatal(err)
	}
	save := func(name, version string) error {
		a := core.NewRecord(col)
		a.Set(sites.FieldAliasDeployment, idAliceSite)
		a.Set(sites.FieldAliasName, name)
		a.Set(sites.FieldAliasVersion, version)
		return app.Save(a)
	}
	for _, bad := range []struct{ name, version string }{
		{"v7", alice.GetString("live_version")},      // a version's label
		{"staging", bob.GetString("live_version")},   // another deployment's version
		{"Staging", alice.GetString("live_version")}, // capitals
		{"a--b", alice.GetString("live_version")},    // the label separator
		{"staging", "nosuchversion01"},               // no such version
	} {
		if err := save(bad.name, bad.version); err == nil {
			t.Errorf("alias %q -> %q was accepted", bad.name, bad.version)
		}
	}
	if err := save("staging", alice.GetString("live_version")); err != nil {
		t.Fatal(err)
	}
	if err := save("staging", alice.GetString("live_version")); err == nil {
		t.Error("a second alias of the same name was accepted")
	}
}

// TestLiveVersionKeepsSettings: the live version's settings are the
// site's, whoever changes either: a setting alone (the settings page, the
// dashboard), or the live version in the dashboard, which brings the
// version's own.
func TestLiveVersionKeepsSettings(t *testing.T) {
	app, sd := newFixtureApp(t)
	rec, err := app.FindRecordById(sites.DeploymentsCollection, idAliceSite)
	if err != nil {
		t.Fatal(err)
	}
	first := rec.GetString("live_version")
	spa := true
	rec, _, err = sd.svc.UpdateSettings(t.Context(), rec, sites.Metadata{IsSPA: &spa})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := app.FindRecordById(sites.VersionsCollection, first); !v.GetBool(sites.FieldVersionIsSPA) {
		t.Fatal("the SPA setting changed alone did not reach the live version")
	}
	off := false
	if rec, err = sd.svc.Replace(t.Context(), rec, sites.Metadata{IsSPA: &off}, htmlUpload("<p>second</p>")); err != nil {
		t.Fatal(err)
	}
	rec, _ = app.FindRecordById(sites.DeploymentsCollection, idAliceSite) // as the dashboard loads it
	rec.Set("live_version", first)                                        // the dashboard's rollback
	if err := app.Save(rec); err != nil {
		t.Fatal(err)
	}
	if rec, _ = app.FindRecordById(sites.DeploymentsCollection, idAliceSite); !rec.GetBool(sites.FieldIsSPA) {
		t.Fatal("a dashboard rollback did not bring the version's SPA setting")
	}
	rec.Set(sites.FieldTitle, "Edited") // the dashboard's edit of a field alone
	if err := app.Save(rec); err != nil {
		t.Fatal(err)
	}
	if v, _ := app.FindRecordById(sites.VersionsCollection, first); v.GetString(sites.FieldVersionTitle) != "Edited" {
		t.Fatalf("the live version's title: %q", v.GetString(sites.FieldVersionTitle))
	}
}
