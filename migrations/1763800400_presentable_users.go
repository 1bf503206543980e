package migrations

import (
	"fmt"

	"github.com/pocketbase/pocketbase/core"
	m "github.com/pocketbase/pocketbase/migrations"
)

// The admin dashboard shows a related record by its collection's
// presentable fields, and "N/A" when it has none. PocketBase's users
// collection marks none (its name, which sitedrop never fills, is not one),
// so every deployment's owner, API key's user and session's user read "N/A".
// The e-mail address names an account (an API key already shows its
// prefix: its name may be empty, and would read "N/A" beside it).
func init() {
	m.Register(func(app core.App) error {
		return setPresentable(app, true)
	}, func(app core.App) error {
		return setPresentable(app, false)
	})
}

// setPresentable marks (or unmarks) users.email as the field the dashboard
// shows for a related account.
func setPresentable(app core.App, on bool) error {
	for _, f := range []struct{ collection, field string }{{"users", "email"}} {
		c, err := app.FindCollectionByNameOrId(f.collection)
		if err != nil {
			return fmt.Errorf("find %s: %w", f.collection, err)
		}
		field := c.Fields.GetByName(f.field)
		if field == nil {
			return fmt.Errorf("%s has no field %s", f.collection, f.field)
		}
		email, ok := field.(*core.EmailField)
		if !ok {
			return fmt.Errorf("%s.%s is a %T, not an e-mail field", f.collection, f.field, field)
		}
		email.Presentable = on
		if err := app.Save(c); err != nil {
			return fmt.Errorf("save %s: %w", f.collection, err)
		}
	}
	return nil
}
