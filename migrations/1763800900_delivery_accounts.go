package migrations

import (
	"fmt"

	"github.com/pocketbase/pocketbase/core"
	m "github.com/pocketbase/pocketbase/migrations"
)

// Webhook deliveries name the account they are sent for (the owner of
// their deployment when they were queued), so that the deliverer can share
// its senders fairly between accounts (see forms.Deliverer). A plain text
// field, not a relation: a deployment.deleted delivery outlives its
// deployment, and its account is still the one it is sent for. Rows queued
// before this migration take their deployment's owner; those without a
// deployment (deployment.deleted) keep "" and share one lane.
func init() {
	m.Register(func(app core.App) error {
		dels, err := app.FindCollectionByNameOrId("webhook_deliveries")
		if err != nil {
			return fmt.Errorf("find webhook_deliveries: %w", err)
		}
		dels.Fields.Add(&core.TextField{Name: "account", Max: 32})
		dels.AddIndex("idx_webhook_deliveries_account_due", false, "status, account, next_attempt_at", "")
		if err := app.Save(dels); err != nil {
			return fmt.Errorf("save webhook_deliveries: %w", err)
		}
		if _, err := app.DB().NewQuery(`UPDATE webhook_deliveries SET account = COALESCE(
			(SELECT owner FROM deployments WHERE deployments.id = webhook_deliveries.deployment), '')
			WHERE deployment != ''`).Execute(); err != nil {
			return fmt.Errorf("set the account of queued deliveries: %w", err)
		}
		return nil
	}, func(app core.App) error {
		dels, err := app.FindCollectionByNameOrId("webhook_deliveries")
		if err != nil {
			return nil
		}
		dels.RemoveIndex("idx_webhook_deliveries_account_due")
		dels.Fields.RemoveByName("account")
		return app.Save(dels)
	})
}
