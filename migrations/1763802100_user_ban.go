package migrations

import (
	"fmt"

	"github.com/pocketbase/pocketbase/core"
	m "github.com/pocketbase/pocketbase/migrations"
)

// An administrator can ban an account (issue 31): it cannot sign in, its
// API keys and browser sessions stop working, and its sites are taken
// down with the ban's reason until it is unbanned. As a deployment's
// takedown: banned_reason is the switch (set: banned; emptied:
// unbanned), banned_at and banned_by (the superuser's e-mail) say when
// and who, filled in by the record hooks so that an edit in the
// dashboard is recorded alike.
func init() {
	m.Register(func(app core.App) error {
		users, err := app.FindCollectionByNameOrId("users")
		if err != nil {
			return fmt.Errorf("find users: %w", err)
		}
		users.Fields.Add(&core.TextField{Name: "banned_reason", Max: 500})
		users.Fields.Add(&core.DateField{Name: "banned_at"})
		users.Fields.Add(&core.TextField{Name: "banned_by", Max: 255})
		if err := app.Save(users); err != nil {
			return fmt.Errorf("save users: %w", err)
		}
		return nil
	}, func(app core.App) error {
		users, err := app.FindCollectionByNameOrId("users")
		if err != nil {
			return nil
		}
		users.Fields.RemoveByName("banned_reason")
		users.Fields.RemoveByName("banned_at")
		users.Fields.RemoveByName("banned_by")
		return app.Save(users)
	})
}
