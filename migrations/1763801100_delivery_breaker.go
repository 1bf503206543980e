package migrations

import (
	"fmt"

	"github.com/pocketbase/pocketbase/core"
	m "github.com/pocketbase/pocketbase/migrations"
)

// Webhook deliveries for the receivers' circuit breakers and backlog cap
// (see forms.Deliverer and forms.MaxPendingDeliveries). manual marks the
// deliveries an owner asked for (Send a test, Redeliver): queued while
// their receiver is down, their first attempt is its probe at once. Each
// queued delivery drops its webhook's oldest pending ones past the cap,
// newest first: an index on webhook, status and creation keeps that to
// the webhook's own rows, not every pending one.
func init() {
	m.Register(func(app core.App) error {
		dels, err := app.FindCollectionByNameOrId("webhook_deliveries")
		if err != nil {
			return fmt.Errorf("find webhook_deliveries: %w", err)
		}
		dels.Fields.Add(&core.BoolField{Name: "manual"})
		dels.AddIndex("idx_webhook_deliveries_webhook_backlog", false, "webhook, status, created", "")
		if err := app.Save(dels); err != nil {
			return fmt.Errorf("save webhook_deliveries: %w", err)
		}
		return nil
	}, func(app core.App) error {
		dels, err := app.FindCollectionByNameOrId("webhook_deliveries")
		if err != nil {
			return nil
		}
		dels.RemoveIndex("idx_webhook_deliveries_webhook_backlog")
		dels.Fields.RemoveByName("manual")
		return app.Save(dels)
	})
}
