package migrations

import (
	"fmt"

	"github.com/pocketbase/pocketbase/core"
	m "github.com/pocketbase/pocketbase/migrations"
)

// Webhook deliveries for the receivers' circuit breakers (see
// forms.Deliverer). manual marks the deliveries an owner asked for (Send
// a test, Redeliver): queued while their receiver is down, their first
// attempt is its probe at once.
func init() {
	m.Register(func(app core.App) error {
		dels, err := app.FindCollectionByNameOrId("webhook_deliveries")
		if err != nil {
			return fmt.Errorf("find webhook_deliveries: %w", err)
		}
		dels.Fields.Add(&core.BoolField{Name: "manual"})
		if err := app.Save(dels); err != nil {
			return fmt.Errorf("save webhook_deliveries: %w", err)
		}
		return nil
	}, func(app core.App) error {
		dels, err := app.FindCollectionByNameOrId("webhook_deliveries")
		if err != nil {
			return nil
		}
		dels.Fields.RemoveByName("manual")
		return app.Save(dels)
	})
}
