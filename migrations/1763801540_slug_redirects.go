package migrations

import (
	"fmt"

	"github.com/pocketbase/pocketbase/core"
	m "github.com/pocketbase/pocketbase/migrations"
)

// A renamed site's old slug (issue 30): its host answers 301 to the
// site's current host until expires_at (30 days after the rename), and
// no other deployment can take it meanwhile. One row per old slug,
// gone with its deployment. Superuser-only, like every collection.
func init() {
	m.Register(func(app core.App) error {
		deps, err := app.FindCollectionByNameOrId("deployments")
		if err != nil {
			return fmt.Errorf("find deployments: %w", err)
		}
		c := core.NewBaseCollection("slug_redirects")
		c.Fields.Add(
			&core.TextField{Name: "slug", Required: true, Max: 63, Presentable: true},
			&core.RelationField{Name: "deployment", CollectionId: deps.Id, MaxSelect: 1, Required: true, CascadeDelete: true},
			&core.DateField{Name: "expires_at", Required: true},
			&core.AutodateField{Name: "created", OnCreate: true},
		)
		c.AddIndex("idx_slug_redirects_slug", true, "slug", "")
		c.AddIndex("idx_slug_redirects_deployment", false, "deployment", "")
		c.AddIndex("idx_slug_redirects_expires_at", false, "expires_at", "")
		if err := app.Save(c); err != nil {
			return fmt.Errorf("save slug_redirects: %w", err)
		}
		return nil
	}, func(app core.App) error {
		c, err := app.FindCollectionByNameOrId("slug_redirects")
		if err != nil {
			return nil
		}
		return app.Delete(c)
	})
}
