package migrations

import (
	"fmt"

	"github.com/pocketbase/pocketbase/core"
	m "github.com/pocketbase/pocketbase/migrations"
	"github.com/pocketbase/pocketbase/tools/types"
)

// Site analytics: one row per deployment and UTC day (date is
// YYYY-MM-DD), with the day's counters and its top lists as JSON
// ([{"key","count"}], highest first). Rows go with their deployment
// (cascade); the analytics job purges those older than 400 days.
// Superuser-only.
func init() {
	m.Register(func(app core.App) error {
		deps, err := app.FindCollectionByNameOrId("deployments")
		if err != nil {
			return fmt.Errorf("find deployments: %w", err)
		}
		stats := core.NewBaseCollection("site_stats")
		zero := types.Pointer(0.0)
		stats.Fields.Add(
			&core.RelationField{Name: "deployment", CollectionId: deps.Id, MaxSelect: 1, Required: true, CascadeDelete: true},
			&core.TextField{Name: "date", Required: true, Min: 10, Max: 10, Pattern: `^\d{4}-\d{2}-\d{2}$`},
			&core.NumberField{Name: "page_views", OnlyInt: true, Min: zero},
			&core.NumberField{Name: "visitors", OnlyInt: true, Min: zero},
			&core.NumberField{Name: "not_found", OnlyInt: true, Min: zero},
			&core.NumberField{Name: "bytes", OnlyInt: true, Min: zero},
			&core.NumberField{Name: "bot_views", OnlyInt: true, Min: zero},
			&core.JSONField{Name: "top_pages", MaxSize: 256 << 10},
			&core.JSONField{Name: "referrers", MaxSize: 256 << 10},
			&core.JSONField{Name: "not_found_paths", MaxSize: 256 << 10},
		)
		stats.AddIndex("idx_site_stats_deployment_date", true, "deployment, date", "")
		stats.AddIndex("idx_site_stats_date", false, "date", "")
		if err := app.Save(stats); err != nil {
			return fmt.Errorf("save site_stats: %w", err)
		}
		return nil
	}, func(app core.App) error {
		c, err := app.FindCollectionByNameOrId("site_stats")
		if err != nil {
			return nil
		}
		return app.Delete(c)
	})
}
