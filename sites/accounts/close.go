package accounts

import (
	"fmt"
	"time"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"
)

// Closing an account. DeleteUser deletes the user record; what the
// account held goes with it in the same transaction, whoever deletes it
// (the account page, or an admin in PocketBase's dashboard): its API keys
// and browser sessions by the schema's cascade, its sites and the rest by
// the record hooks (see hooks' bindAccountRecordHooks), its pending sign-in
// codes by DeleteLoginCodes, and its sessions' pending messages by
// Sessions.DropFlashes once they are gone.

// ConfirmsDeletion reports whether typed, what the user typed to confirm
// the deletion of the account of email, is that address (in any case,
// spaces around ignored).
func ConfirmsDeletion(typed, email string) bool {
	typed = NormalizeEmail(typed)
	return typed != "" && typed == NormalizeEmail(email)
}

// DeleteUser deletes the account user and everything in it (see above),
// in one transaction: it is gone whole or not at all.
func DeleteUser(app core.App, user *core.Record) error {
	if err := app.Delete(user); err != nil {
		return fmt.Errorf("delete account %s: %w", user.Id, err)
	}
	return nil
}

// DeleteLoginCodes deletes the pending sign-in codes sent to email.
func DeleteLoginCodes(app core.App, email string) error {
	email = NormalizeEmail(email)
	if email == "" {
		return nil
	}
	if _, err := app.DB().Delete(LoginCodesCollection, dbx.HashExp{fieldCodeEmail: email}).Execute(); err != nil {
		return fmt.Errorf("delete the sign-in codes of %s: %w", email, err)
	}
	return nil
}

// DropFlashes forgets the pending messages of the browser session rec (a
// record of the sessions collection), once it has ended.
func (s *Sessions) DropFlashes(rec *core.Record) {
	if h := rec.GetString(FieldTokenHash); h != "" {
		s.flashes.Take(h, time.Now())
	}
}
