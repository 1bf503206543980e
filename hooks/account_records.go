package hooks

import (
	"github.com/pocketbase/pocketbase/core"

	"sitedrop/hooks/pages"
	"sitedrop/sites"
	"sitedrop/sites/accounts"
	"sitedrop/sites/audit"
	"sitedrop/sites/forms"
)

// bindAccountRecordHooks makes the deletion of an account, from anywhere
// (the account page, PocketBase's dashboard, the records API), take
// everything in it, in the delete's one transaction, so that a crash
// halfway leaves the account whole, never a site served without an owner:
//
//  1. its sites, each as a site's own deletion goes (offline at once; its
//     versions, aliases, domains, submissions, webhooks and their
//     deliveries, analytics; its content left to the collector);
//  2. the user record, and by the schema's cascade its API keys and
//     browser sessions;
//  3. the webhook deliveries queued for the account (the sites'
//     deployment.deleted ones just queued, and the log of older ones):
//     nothing of a closed account is sent;
//  4. its pending sign-in codes;
//  5. its entries in the audit log (those about its things, the
//     deletion's own included, and those it wrote): nothing names it.
//
// Once a browser session is gone, from anywhere, its pending page
// messages go too (sessions).
func bindAccountRecordHooks(app core.App, sessions *pages.Sessions) {
	app.OnRecordDelete(accounts.UsersCollection).BindFunc(func(e *core.RecordEvent) error {
		user := e.Record
		return sites.AroundEventTransaction(e, func(tx core.App) error {
			return sites.DeleteOwned(tx, user.Id)
		}, func(tx core.App) error {
			if err := forms.DeleteAccountDeliveries(tx, user.Id); err != nil {
				return err
			}
			if err := accounts.DeleteLoginCodes(tx, user.Email()); err != nil {
				return err
			}
			return audit.DeleteAccount(tx, user.Id)
		})
	})
	app.OnRecordAfterDeleteSuccess(accounts.SessionsCollection).BindFunc(func(e *core.RecordEvent) error {
		sessions.DropFlashes(e.Record)
		return e.Next()
	})
}
