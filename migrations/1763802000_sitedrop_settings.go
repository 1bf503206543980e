package migrations

import (
	"fmt"

	"github.com/pocketbase/pocketbase/core"
	m "github.com/pocketbase/pocketbase/migrations"
	"github.com/pocketbase/pocketbase/tools/types"
)

// The sitedrop settings (issue 31): one record, edited by an
// administrator in the dashboard, whose fields override the flags of
// anonymous deploys while the server runs (sites.InstanceSettings). Every field
// empty (0 for the number) is the flags' value; the record is created
// so, for the administrator to edit. Superuser-only; the record hooks
// check the values and refuse a second record.
func init() {
	m.Register(func(app core.App) error {
		c := core.NewBaseCollection("sitedrop_settings")
		onOff := []string{"on", "off"}
		c.Fields.Add(
			&core.SelectField{Name: "anon_deploys", Values: onOff, MaxSelect: 1},
			&core.TextField{Name: "anon_ttl", Max: 32},
			&core.NumberField{Name: "anon_deploys_per_hour", OnlyInt: true, Min: types.Pointer(-1.0)},
			&core.TextField{Name: "anon_storage_per_ip", Max: 32},
			&core.SelectField{Name: "anon_hold_until_claimed", Values: onOff, MaxSelect: 1},
			&core.AutodateField{Name: "created", OnCreate: true},
			&core.AutodateField{Name: "updated", OnCreate: true, OnUpdate: true},
		)
		if err := app.Save(c); err != nil {
			return fmt.Errorf("save sitedrop_settings: %w", err)
		}
		if err := app.Save(core.NewRecord(c)); err != nil {
			return fmt.Errorf("save the sitedrop settings record: %w", err)
		}
		return nil
	}, func(app core.App) error {
		c, err := app.FindCollectionByNameOrId("sitedrop_settings")
		if err != nil {
			return nil
		}
		return app.Delete(c)
	})
}
