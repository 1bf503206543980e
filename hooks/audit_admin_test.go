package hooks

import (
	"net/http"
	"strings"
	"testing"

	"sitedrop/sites"
	"sitedrop/sites/audit"
)

// TestAuditAdminActions: an admin's blocklist changes (the admin API) and
// settings changes (the dashboard's records API) are in the audit log as
// that superuser's, from their address, with what changed.
func TestAuditAdminActions(t *testing.T) {
	app, _ := newFixtureApp(t)
	defer app.Cleanup()
	mux := newMux(t, app)
	edit, token := settingsEditor(t, app, mux)
	admin := map[string]string{"Authorization": token, "Content-Type": "application/json"}

	res, out := do(t, mux, http.MethodPost, "/admin/blocklist", `{"kind":"email_domain","value":"spam.example","note":"throwaways"}`, admin)
	if res.StatusCode != http.StatusOK && res.StatusCode != http.StatusCreated {
		t.Fatalf("add a block: %d %s", res.StatusCode, out)
	}
	id := jsonField(t, out, "id")
	if res, out := do(t, mux, http.MethodDelete, "/admin/blocklist/"+id, "", admin); res.StatusCode != http.StatusOK {
		t.Fatalf("remove the block: %d %s", res.StatusCode, out)
	}
	for _, action := range []string{audit.ActionBlock, audit.ActionUnblock} {
		got := auditEntries(t, app, action, id)
		if len(got) != 1 || got[0].ActorKind != audit.KindSuperuser || got[0].IP != testClientIP {
			t.Errorf("audit entries of %s: %+v, want one by the superuser from %s", action, got, testClientIP)
		}
	}

	recs, err := app.FindAllRecords(sites.SettingsCollection)
	if err != nil || len(recs) != 1 {
		t.Fatalf("the settings record: %d, %v", len(recs), err)
	}
	rec := recs[0].Id
	if code, out := edit(`{"anon_deploys":"off"}`); code != 200 {
		t.Fatalf("turn anonymous deploys off: %d %s", code, out)
	}
	got := auditEntries(t, app, audit.ActionSettings, rec)
	if len(got) != 1 || got[0].ActorKind != audit.KindSuperuser || got[0].IP != testClientIP {
		t.Fatalf("audit entries of the settings: %+v, want one by the superuser from %s", got, testClientIP)
	}
	one := onlyEntry(t, app, audit.ActionSettings, rec, audit.KindSuperuser, got[0].Actor, testClientIP, "")
	if d := one.GetString("details"); !strings.Contains(d, `"anon_deploys":"off"`) {
		t.Errorf("the settings entry says %s, want the changed field", d)
	}
}
