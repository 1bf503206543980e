package migrations

import (
	"fmt"

	"github.com/pocketbase/pocketbase/core"
	m "github.com/pocketbase/pocketbase/migrations"
	"github.com/pocketbase/pocketbase/tools/types"
)

// Sign-in by e-mail code and browser sessions: login_codes holds the codes
// (hashed) until they are used, expire or have had too many wrong tries;
// sessions holds the browser sessions (token hashes), each tied to an API
// key. Both superuser-only.
func init() {
	m.Register(func(app core.App) error {
		users, err := app.FindCollectionByNameOrId("users")
		if err != nil {
			return fmt.Errorf("find users: %w", err)
		}

		codes := core.NewBaseCollection("login_codes")
		codes.Fields.Add(
			&core.EmailField{Name: "email", Required: true, Presentable: true},
			&core.TextField{Name: "code_hash", Required: true, Hidden: true, Max: 100},
			&core.NumberField{Name: "attempts", OnlyInt: true, Min: types.Pointer(0.0)},
			&core.DateField{Name: "expires_at", Required: true},
			&core.AutodateField{Name: "created", OnCreate: true},
			&core.AutodateField{Name: "updated", OnCreate: true, OnUpdate: true},
		)
		codes.AddIndex("idx_login_codes_expires_at", false, "expires_at", "")
		if err := app.Save(codes); err != nil {
			return fmt.Errorf("save login_codes: %w", err)
		}

		keys, err := app.FindCollectionByNameOrId("api_keys")
		if err != nil {
			return fmt.Errorf("find api_keys: %w", err)
		}

		// A session stands on the API key it was made with: revoking the
		// key ends the session. owns_key marks the key a code sign-in made
		// for this session, which signing out revokes too.
		sessions := core.NewBaseCollection("sessions")
		sessions.Fields.Add(
			&core.RelationField{Name: "user", CollectionId: users.Id, MaxSelect: 1, Required: true, CascadeDelete: true},
			&core.RelationField{Name: "api_key", CollectionId: keys.Id, MaxSelect: 1, Required: true, CascadeDelete: true},
			&core.BoolField{Name: "owns_key"},
			&core.TextField{Name: "token_hash", Required: true, Hidden: true, Max: 64},
			&core.DateField{Name: "expires_at", Required: true},
			&core.AutodateField{Name: "created", OnCreate: true},
		)
		sessions.AddIndex("idx_sessions_token_hash", true, "token_hash", "")
		sessions.AddIndex("idx_sessions_expires_at", false, "expires_at", "")
		return app.Save(sessions)
	}, func(app core.App) error {
		for _, name := range []string{"sessions", "login_codes"} {
			c, err := app.FindCollectionByNameOrId(name)
			if err != nil {
				continue
			}
			if err := app.Delete(c); err != nil {
				return fmt.Errorf("delete %s: %w", name, err)
			}
		}
		return nil
	})
}
