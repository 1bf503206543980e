package migrations

import (
	"fmt"

	"github.com/pocketbase/pocketbase/core"
	m "github.com/pocketbase/pocketbase/migrations"
)

// PocketBase's own sign-in of the users collection is turned off: sitedrop
// signs accounts in by its own e-mail codes (POST /auth/otp, /auth/verify)
// and API keys, with its own limits, so no built-in path may authenticate
// or mail ("reset your password", sign-in codes) around them. The
// endpoints no collection option closes (verification, e-mail change,
// password-reset confirmation) are refused by a request hook
// (hooks.builtinAuthGuard). The superusers' sign-in is rate limited by
// sitedrop (hooks.superuserSignInLimit), not by PocketBase's limiter.
func init() {
	m.Register(func(app core.App) error {
		users, err := app.FindCollectionByNameOrId("users")
		if err != nil {
			return fmt.Errorf("find users: %w", err)
		}
		users.PasswordAuth.Enabled = false
		users.OTP.Enabled = false
		users.OAuth2.Enabled = false
		users.MFA.Enabled = false
		if err := app.Save(users); err != nil {
			return fmt.Errorf("save users: %w", err)
		}
		return nil
	}, func(app core.App) error {
		users, err := app.FindCollectionByNameOrId("users")
		if err != nil {
			return fmt.Errorf("find users: %w", err)
		}
		users.PasswordAuth.Enabled = true // the others were off before
		if err := app.Save(users); err != nil {
			return fmt.Errorf("save users: %w", err)
		}
		return nil
	})
}
