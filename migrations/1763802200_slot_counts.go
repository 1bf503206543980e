package migrations

import (
	"fmt"

	"github.com/pocketbase/pocketbase/core"
	m "github.com/pocketbase/pocketbase/migrations"
)

// Each account's number of deployments, in a table of its own kept by
// SQLite triggers on the deployments table: a deploy's slot check (and
// the account page's count) reads one row instead of walking the owner's
// index entries, which grew with the account's sites (twice a deploy: the
// precheck and the transaction's check). Triggers, not record hooks, so
// that every writer is counted: the record API, the dashboard, a
// cascade's deletes and the jobs' plain SQL alike, in the writer's own
// transaction. An internal table, not a collection: a record save of a
// stale copy could not write an old count back, and PocketBase refuses a
// collection of the same name.
func init() {
	m.Register(func(app core.App) error {
		for _, q := range []string{
			`CREATE TABLE {{_sitedrop_slots}} ([[owner]] TEXT PRIMARY KEY NOT NULL, [[n]] INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID`,
			`INSERT INTO {{_sitedrop_slots}} ([[owner]], [[n]])
				SELECT [[owner]], COUNT(*) FROM {{deployments}} WHERE [[owner]] != '' GROUP BY [[owner]]`,
			`CREATE TRIGGER [[_sitedrop_slots_insert]] AFTER INSERT ON {{deployments}}
				WHEN NEW.[[owner]] != '' BEGIN
				INSERT INTO {{_sitedrop_slots}} ([[owner]], [[n]]) VALUES (NEW.[[owner]], 1)
					ON CONFLICT ([[owner]]) DO UPDATE SET [[n]] = [[n]] + 1;
			END`,
			`CREATE TRIGGER [[_sitedrop_slots_delete]] AFTER DELETE ON {{deployments}}
				WHEN OLD.[[owner]] != '' BEGIN
				UPDATE {{_sitedrop_slots}} SET [[n]] = [[n]] - 1 WHERE [[owner]] = OLD.[[owner]];
			END`,
			`CREATE TRIGGER [[_sitedrop_slots_owner]] AFTER UPDATE OF [[owner]] ON {{deployments}}
				WHEN OLD.[[owner]] IS NOT NEW.[[owner]] BEGIN
				UPDATE {{_sitedrop_slots}} SET [[n]] = [[n]] - 1 WHERE [[owner]] = OLD.[[owner]] AND OLD.[[owner]] != '';
				INSERT INTO {{_sitedrop_slots}} ([[owner]], [[n]]) SELECT NEW.[[owner]], 1 WHERE NEW.[[owner]] != ''
					ON CONFLICT ([[owner]]) DO UPDATE SET [[n]] = [[n]] + 1;
			END`,
			// an account's row goes with it (its sites went first: the cascade)
			`CREATE TRIGGER [[_sitedrop_slots_user]] AFTER DELETE ON {{users}} BEGIN
				DELETE FROM {{_sitedrop_slots}} WHERE [[owner]] = OLD.[[id]];
			END`,
		} {
			if _, err := app.DB().NewQuery(q).Execute(); err != nil {
				return fmt.Errorf("slot counts: %w", err)
			}
		}
		return nil
	}, func(app core.App) error {
		for _, q := range []string{
			`DROP TRIGGER IF EXISTS [[_sitedrop_slots_insert]]`,
			`DROP TRIGGER IF EXISTS [[_sitedrop_slots_delete]]`,
			`DROP TRIGGER IF EXISTS [[_sitedrop_slots_owner]]`,
			`DROP TRIGGER IF EXISTS [[_sitedrop_slots_user]]`,
			`DROP TABLE IF EXISTS {{_sitedrop_slots}}`,
		} {
			if _, err := app.DB().NewQuery(q).Execute(); err != nil {
				return fmt.Errorf("slot counts: %w", err)
			}
		}
		return nil
	})
}
