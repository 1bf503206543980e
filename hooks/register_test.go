package hooks

import (
	"os"
	"testing"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tests"

	"sitedrop/sites"
	"sitedrop/sites/accounts"
)

// TestRegisterBeforeBootstrap: registered on an app not bootstrapped yet
// (as main does), sitedrop is built and bound when the app bootstraps,
// once: a bootstrap after a reset binds nothing twice.
func TestRegisterBeforeBootstrap(t *testing.T) {
	t.Parallel()
	src, err := tests.NewTestApp(templates.bare(t)) // a migrated copy to open
	if err != nil {
		t.Fatal(err)
	}
	dir := src.DataDir()
	src.ResetBootstrapState()
	t.Cleanup(func() { os.RemoveAll(dir) })

	app := core.NewBaseApp(core.BaseAppConfig{DataDir: dir})
	serves := app.OnServe().Length()
	sd, err := register(app, testConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	if sd.svc != nil || app.OnServe().Length() != serves {
		t.Fatal("built or bound before the bootstrap")
	}
	if err := app.Bootstrap(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { app.ResetBootstrapState() })
	if sd.svc == nil || app.OnServe().Length() != serves+1 {
		t.Fatalf("after the bootstrap: svc %v, %d serve hooks", sd.svc, app.OnServe().Length()-serves)
	}
	svc := sd.svc
	if err := app.ResetBootstrapState(); err != nil {
		t.Fatal(err)
	}
	if err := app.Bootstrap(); err != nil {
		t.Fatal(err)
	}
	if sd.svc != svc || app.OnServe().Length() != serves+1 {
		t.Fatal("a second bootstrap built or bound sitedrop again")
	}

	// the record hooks are bound: an account gets the free plan
	col, err := app.FindCollectionByNameOrId("users")
	if err != nil {
		t.Fatal(err)
	}
	u := core.NewRecord(col)
	u.SetEmail("new@example.com")
	u.SetRandomPassword()
	if err := app.Save(u); err != nil {
		t.Fatal(err)
	}
	if got := accounts.UserOf(u).Plan(); got != sites.PlanFree {
		t.Fatalf("plan %q, want %q", got, sites.PlanFree)
	}
}
