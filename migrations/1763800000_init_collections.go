// Package migrations holds sitedrop's schema and settings changes, one change
// per file, registered with PocketBase's migration runner.
package migrations

import (
	"fmt"

	"github.com/pocketbase/pocketbase/core"
	m "github.com/pocketbase/pocketbase/migrations"
	"github.com/pocketbase/pocketbase/tools/types"
)

// The collections below are superuser-only (every API rule nil): the public
// API is sitedrop's own routes, and the admin dashboard at /_/ browses them.
func init() {
	m.Register(func(app core.App) error {
		users, err := app.FindCollectionByNameOrId("users")
		if err != nil {
			return fmt.Errorf("find users: %w", err)
		}
		// The seeded users collection allows public sign-up; sitedrop
		// creates accounts itself.
		users.ListRule, users.ViewRule, users.CreateRule, users.UpdateRule, users.DeleteRule = nil, nil, nil, nil, nil
		users.Fields.Add(&core.SelectField{
			Name:      "plan",
			Values:    []string{"free", "pro"},
			MaxSelect: 1,
		})
		if err := app.Save(users); err != nil {
			return fmt.Errorf("save users: %w", err)
		}

		keys := core.NewBaseCollection("api_keys")
		keys.Fields.Add(
			&core.RelationField{Name: "user", CollectionId: users.Id, MaxSelect: 1, Required: true, CascadeDelete: true},
			&core.TextField{Name: "name", Max: 100},
			&core.TextField{Name: "prefix", Required: true, Max: 32, Presentable: true},
			&core.TextField{Name: "hash", Required: true, Max: 64, Hidden: true, System: true},
			&core.DateField{Name: "last_used_at"},
			&core.AutodateField{Name: "created", OnCreate: true},
			&core.AutodateField{Name: "updated", OnCreate: true, OnUpdate: true},
		)
		keys.AddIndex("idx_api_keys_hash", true, "hash", "")
		keys.AddIndex("idx_api_keys_prefix", false, "prefix", "")
		if err := app.Save(keys); err != nil {
			return fmt.Errorf("save api_keys: %w", err)
		}

		deps := core.NewBaseCollection("deployments")
		deps.Fields.Add(
			&core.TextField{Name: "slug", Required: true, Min: 3, Max: 63, Pattern: `^[a-z]+(-[a-z]+)*$`, Presentable: true, System: true},
			// Deleting an account deletes its deployments (and, through the
			// record hooks, takes their sites offline).
			&core.RelationField{Name: "owner", CollectionId: users.Id, MaxSelect: 1, CascadeDelete: true},
			&core.TextField{Name: "title", Max: 500},
			&core.TextField{Name: "description", Max: 2000},
			&core.TextField{Name: "favicon", Max: 64},
			&core.BoolField{Name: "is_spa"},
			&core.SelectField{Name: "storage_type", Values: []string{"html", "files"}, MaxSelect: 1, Required: true},
			&core.SelectField{Name: "status", Values: []string{"active", "disabled"}, MaxSelect: 1, Required: true},
			// live_version is the content pointer: the id of the versions
			// row whose manifest is served. A plain text field (not a
			// relation) so that versions can cascade from deployments
			// without a relation cycle.
			&core.TextField{Name: "live_version", Max: 32, System: true},
			&core.TextField{Name: "claim_token_hash", Max: 64, Hidden: true},
			&core.DateField{Name: "expires_at"},
			&core.AutodateField{Name: "created", OnCreate: true},
			&core.AutodateField{Name: "updated", OnCreate: true, OnUpdate: true},
		)
		deps.AddIndex("idx_deployments_slug", true, "slug", "")
		deps.AddIndex("idx_deployments_owner", false, "owner", "")
		deps.AddIndex("idx_deployments_expires_at", false, "expires_at", "")
		if err := app.Save(deps); err != nil {
			return fmt.Errorf("save deployments: %w", err)
		}

		versions := core.NewBaseCollection("versions")
		versions.Fields.Add(
			&core.RelationField{Name: "deployment", CollectionId: deps.Id, MaxSelect: 1, Required: true, CascadeDelete: true},
			&core.NumberField{Name: "number", OnlyInt: true, Min: types.Pointer(1.0), Required: true},
			&core.JSONField{Name: "manifest", MaxSize: 32 << 20},
			&core.NumberField{Name: "file_count", OnlyInt: true, Min: types.Pointer(0.0)},
			&core.NumberField{Name: "total_bytes", OnlyInt: true, Min: types.Pointer(0.0)},
			&core.AutodateField{Name: "created", OnCreate: true},
		)
		versions.AddIndex("idx_versions_deployment_number", true, "deployment, number", "")
		return app.Save(versions)
	}, func(app core.App) error {
		for _, name := range []string{"versions", "deployments", "api_keys"} {
			c, err := app.FindCollectionByNameOrId(name)
			if err != nil {
				continue
			}
			if err := app.Delete(c); err != nil {
				return fmt.Errorf("delete %s: %w", name, err)
			}
		}
		users, err := app.FindCollectionByNameOrId("users")
		if err != nil {
			return err
		}
		users.Fields.RemoveByName("plan")
		return app.Save(users)
	})
}
