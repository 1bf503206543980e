package migrations

import (
	"fmt"
	"slices"

	"github.com/pocketbase/pocketbase/core"
	m "github.com/pocketbase/pocketbase/migrations"
)

// superuserRateLimits bound the superuser sign-in of the dashboard per
// client address. "_superusers:auth" covers auth-with-password,
// auth-with-otp (MFA's second step included) and auth-with-oauth2;
// PocketBase keeps one window per endpoint. Signed-in superusers are never
// limited, so the dashboard's normal use is not.
var superuserRateLimits = []core.RateLimitRule{
	{Label: "_superusers:auth", MaxRequests: SuperuserAuthTries, Duration: SuperuserAuthWindow},
	{Label: "_superusers:confirmPasswordReset", MaxRequests: SuperuserAuthTries, Duration: SuperuserAuthWindow},
	{Label: "_superusers:requestOTP", MaxRequests: SuperuserMailTries, Duration: SuperuserMailWindow},
	{Label: "_superusers:requestPasswordReset", MaxRequests: SuperuserMailTries, Duration: SuperuserMailWindow},
}

// PocketBase's own sign-in of the users collection is turned off: sitedrop
// signs accounts in by its own e-mail codes (POST /auth/otp, /auth/verify)
// and API keys, with its own limits, so no built-in path may authenticate
// or mail ("reset your password", sign-in codes) around them. The
// endpoints no collection option closes (verification, e-mail change,
// password-reset confirmation) are refused by a request hook
// (hooks.builtinAuthGuard).
//
// PocketBase's rate limiter is turned on with rules for the superuser
// sign-in. Its default rules stay: they only reach /api/ requests of
// clients that are not signed-in superusers, never sitedrop's own routes.
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

		s := app.Settings()
		s.RateLimits.Enabled = true
		// a collection's own labels win over wildcard ones ("*:auth")
		// whatever the order of the rules
		rules := slices.DeleteFunc(slices.Clone(s.RateLimits.Rules), isSuperuserRule)
		s.RateLimits.Rules = append(rules, superuserRateLimits...)
		if err := app.Save(s); err != nil {
			return fmt.Errorf("save rate limits: %w", err)
		}
		return nil
	}, func(app core.App) error {
		users, err := app.FindCollectionByNameOrId("users")
		if err != nil {
			return fmt.Errorf("find users: %w", err)
		}
		users.PasswordAuth.Enabled = true
		if err := app.Save(users); err != nil {
			return fmt.Errorf("save users: %w", err)
		}
		s := app.Settings()
		s.RateLimits.Rules = slices.DeleteFunc(s.RateLimits.Rules, isSuperuserRule)
		if err := app.Save(s); err != nil {
			return fmt.Errorf("save rate limits: %w", err)
		}
		return nil
	})
}

// isSuperuserRule tells the rules this migration adds (by label).
func isSuperuserRule(r core.RateLimitRule) bool {
	return slices.ContainsFunc(superuserRateLimits, func(s core.RateLimitRule) bool { return s.Label == r.Label })
}
