package accounts

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/pocketbase/pocketbase/core"
)

// NormalizeEmail trims and lowercases an address, so that one person gets
// one account whatever the case they type.
func NormalizeEmail(email string) string {
	return strings.ToLower(strings.TrimSpace(email))
}

// UpsertUser creates the account for email (already normalised), or
// finds it; a non-empty plan is set either way. It reports whether the
// account was created.
func UpsertUser(app core.App, email, plan string) (*core.Record, bool, error) {
	rec, err := FindUserByEmail(app, email)
	created := false
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, false, fmt.Errorf("look up user %s: %w", email, err)
	}
	if err != nil {
		col, err := app.FindCollectionByNameOrId(UsersCollection)
		if err != nil {
			return nil, false, fmt.Errorf("find users collection: %w", err)
		}
		rec = NewUser(col).Record
		rec.SetEmail(email)
		rec.SetVerified(true)
		rec.SetRandomPassword() // accounts sign in with keys and e-mail codes
		created = true
	}
	if plan != "" {
		UserOf(rec).SetPlan(plan)
	}
	if err := app.Save(rec); err != nil {
		return nil, false, fmt.Errorf("save user %s: %w", email, err)
	}
	return rec, created, nil
}

// FindUserByEmail returns the account of email (already normalised); an
// unknown address is an error that is sql.ErrNoRows.
func FindUserByEmail(app core.App, email string) (*core.Record, error) {
	rec, err := app.FindAuthRecordByEmail(UsersCollection, email)
	if err != nil {
		return nil, fmt.Errorf("find user %s: %w", email, err)
	}
	return rec, nil
}
