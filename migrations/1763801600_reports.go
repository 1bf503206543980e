package migrations

import (
	"fmt"

	"github.com/pocketbase/pocketbase/core"
	m "github.com/pocketbase/pocketbase/migrations"
)

// Abuse reports (issue 31): anyone may report a site by its URL, without
// an account; the report names the deployment the URL serves (kept in
// slug as well, so the queue still says which site it was once the
// deployment is gone). Admins work the queue (status open → dismissed or
// actioned) in the dashboard; mailed_at is when the batched mail to the
// admins listed it. Superuser-only, like every collection.
func init() {
	m.Register(func(app core.App) error {
		deps, err := app.FindCollectionByNameOrId("deployments")
		if err != nil {
			return fmt.Errorf("find deployments: %w", err)
		}
		c := core.NewBaseCollection("reports")
		c.Fields.Add(
			&core.TextField{Name: "url", Required: true, Max: 2048, Presentable: true},
			&core.SelectField{Name: "reason", Required: true, MaxSelect: 1,
				Values: []string{"phishing", "malware", "spam", "illegal", "copyright", "other"}},
			&core.TextField{Name: "details", Max: 2000},
			&core.EmailField{Name: "email"},
			&core.SelectField{Name: "status", Required: true, MaxSelect: 1,
				Values: []string{"open", "dismissed", "actioned"}},
			&core.RelationField{Name: "deployment", CollectionId: deps.Id, MaxSelect: 1},
			&core.TextField{Name: "slug", Max: 63},
			&core.TextField{Name: "host", Max: 255},
			&core.TextField{Name: "ip", Max: 64},
			&core.TextField{Name: "note", Max: 2000},
			&core.DateField{Name: "mailed_at"},
			&core.AutodateField{Name: "created", OnCreate: true},
			&core.AutodateField{Name: "updated", OnCreate: true, OnUpdate: true},
		)
		c.AddIndex("idx_reports_status_created", false, "status, created", "")
		c.AddIndex("idx_reports_deployment", false, "deployment", "")
		c.AddIndex("idx_reports_mailed_at", false, "mailed_at", "")
		if err := app.Save(c); err != nil {
			return fmt.Errorf("save reports: %w", err)
		}
		return nil
	}, func(app core.App) error {
		c, err := app.FindCollectionByNameOrId("reports")
		if err != nil {
			return nil
		}
		return app.Delete(c)
	})
}
