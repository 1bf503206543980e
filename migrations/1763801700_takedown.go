package migrations

import (
	"fmt"

	"github.com/pocketbase/pocketbase/core"
	m "github.com/pocketbase/pocketbase/migrations"
)

// An administrator can take a site down (issue 31): every host of it
// answers "This site was taken down for: <reason>" (410) until it is
// restored; it keeps its slot, slug, versions and data meanwhile, and
// cannot be redeployed, renamed, resumed or promoted. Apart from the
// owner's pause and from status (disabled): takedown_reason is the switch
// (set: taken down; emptied: restored), taken_down_at and taken_down_by
// (the superuser's e-mail) say when and who, filled in by the record
// hooks so that an edit in the dashboard is recorded alike.
func init() {
	m.Register(func(app core.App) error {
		deps, err := app.FindCollectionByNameOrId("deployments")
		if err != nil {
			return fmt.Errorf("find deployments: %w", err)
		}
		deps.Fields.Add(&core.TextField{Name: "takedown_reason", Max: 500})
		deps.Fields.Add(&core.DateField{Name: "taken_down_at"})
		deps.Fields.Add(&core.TextField{Name: "taken_down_by", Max: 255})
		if err := app.Save(deps); err != nil {
			return fmt.Errorf("save deployments: %w", err)
		}
		return nil
	}, func(app core.App) error {
		deps, err := app.FindCollectionByNameOrId("deployments")
		if err != nil {
			return nil
		}
		deps.Fields.RemoveByName("takedown_reason")
		deps.Fields.RemoveByName("taken_down_at")
		deps.Fields.RemoveByName("taken_down_by")
		return app.Save(deps)
	})
}
