package migrations

import (
	"fmt"

	"github.com/pocketbase/pocketbase/core"
	m "github.com/pocketbase/pocketbase/migrations"
	"github.com/pocketbase/pocketbase/tools/types"
)

// Custom domains (see sites/domains): one row per claim of a domain by a
// deployment, with the TXT token that proves it and the verification's
// state. Several deployments may claim a domain; one at a time has it
// verified (a partial unique index). Rows go with their deployment
// (cascade), which releases its domains. Superuser-only.
func init() {
	m.Register(func(app core.App) error {
		deps, err := app.FindCollectionByNameOrId("deployments")
		if err != nil {
			return fmt.Errorf("find deployments: %w", err)
		}
		c := core.NewBaseCollection("domains")
		c.Fields.Add(
			&core.TextField{Name: "domain", Required: true, Max: 253, Pattern: `^[a-z0-9.-]+$`, Presentable: true},
			&core.RelationField{Name: "deployment", CollectionId: deps.Id, MaxSelect: 1, Required: true, CascadeDelete: true},
			&core.SelectField{Name: "status", Required: true, MaxSelect: 1, Values: []string{"pending", "verified", "failed"}},
			&core.TextField{Name: "reason", Max: 1000},
			&core.TextField{Name: "token", Required: true, Max: 100},
			&core.DateField{Name: "since"},
			&core.DateField{Name: "checked"},
			&core.DateField{Name: "verified"},
			&core.NumberField{Name: "attempts", OnlyInt: true, Min: types.Pointer(0.0)},
			&core.AutodateField{Name: "created", OnCreate: true},
			&core.AutodateField{Name: "updated", OnCreate: true, OnUpdate: true},
		)
		c.AddIndex("idx_domains_deployment_domain", true, "deployment, domain", "")
		c.AddIndex("idx_domains_verified", true, "domain", "status = 'verified'")
		c.AddIndex("idx_domains_status", false, "status", "")
		if err := app.Save(c); err != nil {
			return fmt.Errorf("save domains: %w", err)
		}
		return nil
	}, func(app core.App) error {
		c, err := app.FindCollectionByNameOrId("domains")
		if err != nil {
			return nil
		}
		return app.Delete(c)
	})
}
