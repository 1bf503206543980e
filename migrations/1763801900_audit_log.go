package migrations

import (
	"fmt"

	"github.com/pocketbase/pocketbase/core"
	m "github.com/pocketbase/pocketbase/migrations"
)

// The audit log (issue 31): who (an account's or superuser's id, or
// "anonymous"/"system"), from which address, did what to which
// deployment, key, domain or webhook, with small details. All its rules
// are nil: only superusers read it through the record API (the admin
// dashboard), and the record hooks refuse updates and deletes from
// anyone, so it is append-only; the purge job drops entries past 90 days.
func init() {
	m.Register(func(app core.App) error {
		c := core.NewBaseCollection("audit_log")
		c.Fields.Add(
			&core.TextField{Name: "actor", Required: true, Max: 64},
			&core.SelectField{Name: "actor_kind", Required: true, MaxSelect: 1,
				Values: []string{"user", "superuser", "anonymous", "system"}},
			&core.TextField{Name: "ip", Max: 64},
			&core.TextField{Name: "action", Required: true, Max: 32, Pattern: `^[a-z_]+$`},
			&core.TextField{Name: "target_kind", Max: 32},
			&core.TextField{Name: "target", Max: 64},
			// the account whose thing it is, kept as a plain id so that the
			// entries outlive the deletion of what they name
			&core.TextField{Name: "owner", Max: 64},
			&core.JSONField{Name: "details", MaxSize: 4096},
			&core.AutodateField{Name: "created", OnCreate: true},
		)
		c.AddIndex("idx_audit_log_owner_created", false, "owner, created", "")
		c.AddIndex("idx_audit_log_created", false, "created", "")
		if err := app.Save(c); err != nil {
			return fmt.Errorf("save audit_log: %w", err)
		}
		return nil
	}, func(app core.App) error {
		c, err := app.FindCollectionByNameOrId("audit_log")
		if err != nil {
			return nil
		}
		return app.Delete(c)
	})
}
