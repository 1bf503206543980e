package migrations

import (
	"fmt"

	"github.com/pocketbase/pocketbase/core"
	m "github.com/pocketbase/pocketbase/migrations"
)

// The moderation page (/admin on the web host) signs superusers in with
// their PocketBase e-mail and password and keeps them in a cookie of its
// own (PocketBase's dashboard keeps its token in localStorage, which a
// server-rendered page cannot read). A session is the hash of its token,
// its superuser's id and a short expiry; deleting the superuser ends it
// (the session then finds no one). No
// rules: only superusers reach it through PocketBase's API.
func init() {
	m.Register(func(app core.App) error {
		col := core.NewBaseCollection("admin_sessions")
		col.Fields.Add(
			// the superuser's id: text, as a relation to _superusers shows
			// N/A in the dashboard; a deleted superuser's session finds no
			// one and is signed out
			&core.TextField{Name: "superuser", Required: true, Max: 64},
			&core.TextField{Name: "token_hash", Required: true, Hidden: true, Max: 64},
			&core.DateField{Name: "expires_at", Required: true},
			&core.AutodateField{Name: "created", OnCreate: true},
		)
		col.AddIndex("idx_admin_sessions_token_hash", true, "token_hash", "")
		col.AddIndex("idx_admin_sessions_expires_at", false, "expires_at", "")
		if err := app.Save(col); err != nil {
			return fmt.Errorf("save admin_sessions: %w", err)
		}
		return nil
	}, func(app core.App) error {
		col, err := app.FindCollectionByNameOrId("admin_sessions")
		if err != nil {
			return nil
		}
		return app.Delete(col)
	})
}
