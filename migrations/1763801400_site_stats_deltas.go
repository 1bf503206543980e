package migrations

import (
	"fmt"

	"github.com/pocketbase/pocketbase/core"
	m "github.com/pocketbase/pocketbase/migrations"
)

// The replicas' analytics deltas the primary has added to site_stats
// (sites/analytics/statsdb): a delta's object key is recorded in the same
// transaction as its counts, so a delta is applied once even when the
// primary stops between that commit and the object's delete. The row
// goes once the object is deleted; a daily job removes any left older
// than two days. Superuser-only.
func init() {
	m.Register(func(app core.App) error {
		c := core.NewBaseCollection("site_stats_deltas")
		c.Fields.Add(
			&core.TextField{Name: "key", Required: true, Max: 512},
			&core.AutodateField{Name: "created", OnCreate: true},
		)
		c.AddIndex("idx_site_stats_deltas_key", true, "key", "")
		c.AddIndex("idx_site_stats_deltas_created", false, "created", "")
		if err := app.Save(c); err != nil {
			return fmt.Errorf("save site_stats_deltas: %w", err)
		}
		return nil
	}, func(app core.App) error {
		c, err := app.FindCollectionByNameOrId("site_stats_deltas")
		if err != nil {
			return nil
		}
		return app.Delete(c)
	})
}
