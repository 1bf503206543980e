package migrations

import (
	"fmt"

	"github.com/pocketbase/pocketbase/core"
	m "github.com/pocketbase/pocketbase/migrations"
)

// An owner can pause a site (issue 30): it keeps its slot, slug and
// versions, and its hosts answer a "paused" page until it is resumed.
// Apart from status, which only an administrator sets (disabled).
func init() {
	m.Register(func(app core.App) error {
		deps, err := app.FindCollectionByNameOrId("deployments")
		if err != nil {
			return fmt.Errorf("find deployments: %w", err)
		}
		deps.Fields.Add(&core.BoolField{Name: "paused"})
		if err := app.Save(deps); err != nil {
			return fmt.Errorf("save deployments: %w", err)
		}
		return nil
	}, func(app core.App) error {
		deps, err := app.FindCollectionByNameOrId("deployments")
		if err != nil {
			return nil
		}
		deps.Fields.RemoveByName("paused")
		return app.Save(deps)
	})
}
