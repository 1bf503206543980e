package migrations

import (
	"fmt"

	"github.com/pocketbase/pocketbase/core"
	m "github.com/pocketbase/pocketbase/migrations"
	"github.com/pocketbase/pocketbase/tools/types"
)

// Deploy previews (issue 29): the page views of a site's preview hosts
// (<label>--<slug>) are counted in their own column, preview_views, so
// the live site's page views, visitors and top lists never hold them.
func init() {
	m.Register(func(app core.App) error {
		stats, err := app.FindCollectionByNameOrId("site_stats")
		if err != nil {
			return fmt.Errorf("find site_stats: %w", err)
		}
		stats.Fields.Add(&core.NumberField{Name: "preview_views", OnlyInt: true, Min: types.Pointer(0.0)})
		if err := app.Save(stats); err != nil {
			return fmt.Errorf("save site_stats: %w", err)
		}
		return nil
	}, func(app core.App) error {
		stats, err := app.FindCollectionByNameOrId("site_stats")
		if err != nil {
			return nil
		}
		stats.Fields.RemoveByName("preview_views")
		return app.Save(stats)
	})
}
