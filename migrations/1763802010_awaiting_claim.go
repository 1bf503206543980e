package migrations

import (
	"fmt"

	"github.com/pocketbase/pocketbase/core"
	m "github.com/pocketbase/pocketbase/migrations"
)

// An anonymous site deployed while the settings keep them unserved until
// claimed (issue 31) is awaiting its claim: every host of it answers the
// "awaiting claim" page until an account claims it, which clears the
// field.
func init() {
	m.Register(func(app core.App) error {
		deps, err := app.FindCollectionByNameOrId("deployments")
		if err != nil {
			return fmt.Errorf("find deployments: %w", err)
		}
		deps.Fields.Add(&core.BoolField{Name: "awaiting_claim"})
		if err := app.Save(deps); err != nil {
			return fmt.Errorf("save deployments: %w", err)
		}
		return nil
	}, func(app core.App) error {
		deps, err := app.FindCollectionByNameOrId("deployments")
		if err != nil {
			return nil
		}
		deps.Fields.RemoveByName("awaiting_claim")
		return app.Save(deps)
	})
}
