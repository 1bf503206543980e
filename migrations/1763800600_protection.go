package migrations

import (
	"fmt"

	"github.com/pocketbase/pocketbase/core"
	m "github.com/pocketbase/pocketbase/migrations"
)

// Protected sites: a deployment may ask visitors for a password
// (protect_password_hash, a bcrypt hash) and/or let them in with a share
// link (protect_link); protect_secret is the per-site secret the share
// token and the gate cookie's key derive from (see sites.Protection).
// The hash and the secret are hidden from the admin API.
func init() {
	m.Register(func(app core.App) error {
		deps, err := app.FindCollectionByNameOrId("deployments")
		if err != nil {
			return fmt.Errorf("find deployments: %w", err)
		}
		deps.Fields.Add(
			&core.TextField{Name: "protect_password_hash", Max: 100, Hidden: true},
			&core.BoolField{Name: "protect_link"},
			&core.TextField{Name: "protect_secret", Max: 64, Hidden: true},
		)
		if err := app.Save(deps); err != nil {
			return fmt.Errorf("save deployments: %w", err)
		}
		return nil
	}, func(app core.App) error {
		deps, err := app.FindCollectionByNameOrId("deployments")
		if err != nil {
			return nil
		}
		for _, name := range []string{"protect_password_hash", "protect_link", "protect_secret"} {
			deps.Fields.RemoveByName(name)
		}
		return app.Save(deps)
	})
}
