package migrations

import (
	"fmt"
	"slices"

	"github.com/pocketbase/pocketbase/core"
	m "github.com/pocketbase/pocketbase/migrations"
)

// Webhooks may subscribe to deployment.renamed (issue 30): a site's
// slug changed, its payload names the new slug and URL.
func init() {
	m.Register(func(app core.App) error {
		hooks, err := app.FindCollectionByNameOrId("webhooks")
		if err != nil {
			return fmt.Errorf("find webhooks: %w", err)
		}
		events, ok := hooks.Fields.GetByName("events").(*core.SelectField)
		if !ok {
			return fmt.Errorf("webhooks.events is not a select field")
		}
		if !slices.Contains(events.Values, "deployment.renamed") {
			events.Values = append(events.Values, "deployment.renamed")
		}
		events.MaxSelect = len(events.Values)
		if err := app.Save(hooks); err != nil {
			return fmt.Errorf("save webhooks: %w", err)
		}
		return nil
	}, func(app core.App) error {
		hooks, err := app.FindCollectionByNameOrId("webhooks")
		if err != nil {
			return nil
		}
		if events, ok := hooks.Fields.GetByName("events").(*core.SelectField); ok {
			events.Values = slices.DeleteFunc(events.Values, func(v string) bool { return v == "deployment.renamed" })
			events.MaxSelect = len(events.Values)
		}
		return app.Save(hooks)
	})
}
