package forms

import (
	"fmt"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"
)

// DeleteAccountDeliveries deletes every webhook delivery queued for the
// account accountID, sent or not: those its sites' deletion queued
// (deployment.deleted, which outlive their deployment) and the log of
// earlier ones. Run in the account's closing transaction, after its
// sites are gone, nothing of the account is sent any more.
func DeleteAccountDeliveries(app core.App, accountID string) error {
	if accountID == "" {
		return nil // "" is the shared lane of old deliveries, no account
	}
	if _, err := app.DB().Delete(DeliveriesCollection, dbx.HashExp{deliveryAccount: accountID}).Execute(); err != nil {
		return fmt.Errorf("delete the webhook deliveries of %s: %w", accountID, err)
	}
	return nil
}
