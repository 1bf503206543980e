package migrations

import (
	"fmt"

	"github.com/pocketbase/pocketbase/core"
	m "github.com/pocketbase/pocketbase/migrations"
)

// Deploy previews (issue 29). A version gains the deploy's message and
// the settings it was deployed with: the SPA setting (a preview serves
// the version as it was deployed), the descriptive fields and the storage
// type (promoting a draft makes them the site's). Existing versions take
// their deployment's current values, which a rollback kept until now. Aliases name a version of their deployment (staging--<slug>):
// one row per (deployment, name), gone with the deployment or with the
// version it names. Webhooks may subscribe to deployment.draft.
// Superuser-only, like every collection.
func init() {
	m.Register(func(app core.App) error {
		vers, err := app.FindCollectionByNameOrId("versions")
		if err != nil {
			return fmt.Errorf("find versions: %w", err)
		}
		vers.Fields.Add(
			&core.TextField{Name: "message", Max: 200},
			&core.BoolField{Name: "is_spa"},
			&core.TextField{Name: "title", Max: 500},
			&core.TextField{Name: "description", Max: 2000},
			&core.TextField{Name: "favicon", Max: 64},
			&core.SelectField{Name: "storage_type", Values: []string{"html", "files"}, MaxSelect: 1},
		)
		// an alias's version shows as its number in the dashboard
		if n, ok := vers.Fields.GetByName("number").(*core.NumberField); ok {
			n.Presentable = true
		}
		if err := app.Save(vers); err != nil {
			return fmt.Errorf("save versions: %w", err)
		}
		for _, f := range versionSettings {
			_, err = app.DB().NewQuery("UPDATE {{versions}} SET [[" + f + "]] = (SELECT d.[[" + f + "]] FROM {{deployments}} d WHERE d.[[id]] = {{versions}}.[[deployment]])").Execute()
			if err != nil {
				return fmt.Errorf("backfill versions.%s: %w", f, err)
			}
		}

		deps, err := app.FindCollectionByNameOrId("deployments")
		if err != nil {
			return fmt.Errorf("find deployments: %w", err)
		}
		aliases := core.NewBaseCollection("aliases")
		aliases.Fields.Add(
			&core.RelationField{Name: "deployment", CollectionId: deps.Id, MaxSelect: 1, Required: true, CascadeDelete: true},
			&core.TextField{Name: "name", Required: true, Min: 1, Max: 32, Pattern: `^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$`, Presentable: true},
			&core.RelationField{Name: "version", CollectionId: vers.Id, MaxSelect: 1, Required: true, CascadeDelete: true},
			&core.AutodateField{Name: "created", OnCreate: true},
			&core.AutodateField{Name: "updated", OnCreate: true, OnUpdate: true},
		)
		aliases.AddIndex("idx_aliases_deployment_name", true, "deployment, name", "")
		aliases.AddIndex("idx_aliases_version", false, "version", "")
		if err := app.Save(aliases); err != nil {
			return fmt.Errorf("save aliases: %w", err)
		}

		hooks, err := app.FindCollectionByNameOrId("webhooks")
		if err != nil {
			return fmt.Errorf("find webhooks: %w", err)
		}
		events, ok := hooks.Fields.GetByName("events").(*core.SelectField)
		if !ok {
			return fmt.Errorf("webhooks.events is not a select field")
		}
		events.Values = append(events.Values, "deployment.draft")
		events.MaxSelect = len(events.Values)
		if err := app.Save(hooks); err != nil {
			return fmt.Errorf("save webhooks: %w", err)
		}
		return nil
	}, func(app core.App) error {
		if c, err := app.FindCollectionByNameOrId("aliases"); err == nil {
			if err := app.Delete(c); err != nil {
				return fmt.Errorf("delete aliases: %w", err)
			}
		}
		if hooks, err := app.FindCollectionByNameOrId("webhooks"); err == nil {
			if events, ok := hooks.Fields.GetByName("events").(*core.SelectField); ok {
				var kept []string
				for _, v := range events.Values {
					if v != "deployment.draft" {
						kept = append(kept, v)
					}
				}
				events.Values, events.MaxSelect = kept, len(kept)
				if err := app.Save(hooks); err != nil {
					return fmt.Errorf("save webhooks: %w", err)
				}
			}
		}
		vers, err := app.FindCollectionByNameOrId("versions")
		if err != nil {
			return nil
		}
		vers.Fields.RemoveByName("message")
		if n, ok := vers.Fields.GetByName("number").(*core.NumberField); ok {
			n.Presentable = false
		}
		for _, f := range versionSettings {
			vers.Fields.RemoveByName(f)
		}
		return app.Save(vers)
	})
}

// versionSettings are the deployments' fields a version keeps as it was
// deployed with them.
var versionSettings = []string{"is_spa", "title", "description", "favicon", "storage_type"}
