package migrations

import (
	"fmt"

	"github.com/pocketbase/pocketbase/core"
	m "github.com/pocketbase/pocketbase/migrations"
)

// A browser session keeps the User-Agent it signed in with (its first 512
// bytes, accounts.MaxUserAgentLen), so the account page can name the
// browser and system of each ("Firefox on macOS"). Sessions made before
// have none and read as an unknown browser.
func init() {
	m.Register(func(app core.App) error {
		c, err := app.FindCollectionByNameOrId("sessions")
		if err != nil {
			return fmt.Errorf("find sessions: %w", err)
		}
		c.Fields.Add(&core.TextField{Name: "user_agent", Max: 512})
		if err := app.Save(c); err != nil {
			return fmt.Errorf("save sessions: %w", err)
		}
		return nil
	}, func(app core.App) error {
		c, err := app.FindCollectionByNameOrId("sessions")
		if err != nil {
			return nil
		}
		c.Fields.RemoveByName("user_agent")
		return app.Save(c)
	})
}
