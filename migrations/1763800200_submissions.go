package migrations

import (
	"fmt"

	"github.com/pocketbase/pocketbase/core"
	m "github.com/pocketbase/pocketbase/migrations"
	"github.com/pocketbase/pocketbase/tools/types"
)

// Form submissions, webhooks and their deliveries, and e-mail notification
// settings on deployments. Submissions and webhooks go with their
// deployment (cascade). A delivery keeps a copy of its target (url, type,
// secret) so that a deployment.deleted delivery can still be sent after the
// deployment and its webhooks are gone; other deliveries go with their
// deployment. All superuser-only.
func init() {
	m.Register(func(app core.App) error {
		deps, err := app.FindCollectionByNameOrId("deployments")
		if err != nil {
			return fmt.Errorf("find deployments: %w", err)
		}
		deps.Fields.Add(
			&core.BoolField{Name: "notify_email"},
			// notified_until is the creation time of the newest submission
			// already mailed; last_mail_at paces mails to one a minute.
			&core.DateField{Name: "notified_until"},
			&core.DateField{Name: "last_mail_at"},
		)
		if err := app.Save(deps); err != nil {
			return fmt.Errorf("save deployments: %w", err)
		}

		subs := core.NewBaseCollection("submissions")
		subs.Fields.Add(
			&core.RelationField{Name: "deployment", CollectionId: deps.Id, MaxSelect: 1, Required: true, CascadeDelete: true},
			// JSON is stored HTML-escaped (< becomes \u003c): room for a 64 KiB
			// body of such characters.
			&core.JSONField{Name: "data", MaxSize: 1 << 20},
			&core.AutodateField{Name: "created", OnCreate: true},
		)
		subs.AddIndex("idx_submissions_deployment_created", false, "deployment, created", "")
		if err := app.Save(subs); err != nil {
			return fmt.Errorf("save submissions: %w", err)
		}

		hooks := core.NewBaseCollection("webhooks")
		hooks.Fields.Add(
			&core.RelationField{Name: "deployment", CollectionId: deps.Id, MaxSelect: 1, Required: true, CascadeDelete: true},
			&core.URLField{Name: "url", Required: true, Presentable: true},
			&core.SelectField{Name: "type", Values: []string{"generic", "slack"}, MaxSelect: 1, Required: true},
			&core.SelectField{Name: "events", Values: []string{"submission", "deployment.updated", "deployment.deleted"}, MaxSelect: 3, Required: true},
			&core.TextField{Name: "secret", Required: true, Hidden: true, Max: 100},
			&core.BoolField{Name: "active"},
			&core.AutodateField{Name: "created", OnCreate: true},
		)
		hooks.AddIndex("idx_webhooks_deployment", false, "deployment", "")
		if err := app.Save(hooks); err != nil {
			return fmt.Errorf("save webhooks: %w", err)
		}

		dels := core.NewBaseCollection("webhook_deliveries")
		dels.Fields.Add(
			&core.RelationField{Name: "deployment", CollectionId: deps.Id, MaxSelect: 1, CascadeDelete: true},
			&core.RelationField{Name: "webhook", CollectionId: hooks.Id, MaxSelect: 1},
			&core.TextField{Name: "event", Required: true, Max: 50},
			&core.URLField{Name: "url", Required: true},
			&core.TextField{Name: "type", Required: true, Max: 20},
			&core.TextField{Name: "secret", Required: true, Hidden: true, Max: 100},
			&core.TextField{Name: "payload", Required: true, Max: 2 << 20},
			&core.SelectField{Name: "status", Values: []string{"pending", "delivered", "failed"}, MaxSelect: 1, Required: true},
			&core.NumberField{Name: "attempts", OnlyInt: true, Min: types.Pointer(0.0)},
			&core.DateField{Name: "next_attempt_at"},
			&core.NumberField{Name: "last_status", OnlyInt: true},
			&core.TextField{Name: "last_error", Max: 1000},
			&core.AutodateField{Name: "created", OnCreate: true},
			&core.AutodateField{Name: "updated", OnCreate: true, OnUpdate: true},
		)
		dels.AddIndex("idx_webhook_deliveries_due", false, "status, next_attempt_at", "")
		return app.Save(dels)
	}, func(app core.App) error {
		for _, name := range []string{"webhook_deliveries", "webhooks", "submissions"} {
			c, err := app.FindCollectionByNameOrId(name)
			if err != nil {
				continue
			}
			if err := app.Delete(c); err != nil {
				return fmt.Errorf("delete %s: %w", name, err)
			}
		}
		deps, err := app.FindCollectionByNameOrId("deployments")
		if err != nil {
			return err
		}
		deps.Fields.RemoveByName("notify_email")
		deps.Fields.RemoveByName("notified_until")
		deps.Fields.RemoveByName("last_mail_at")
		return app.Save(deps)
	})
}
