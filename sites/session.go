package sites

import (
	"errors"
	"fmt"
	"time"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/security"
)

// Browser sessions.
const (
	// SessionsCollection holds browser sessions.
	SessionsCollection = "sessions"
	// SessionTTL is how long a browser session lasts.
	SessionTTL = 30 * 24 * time.Hour
)

// ErrNoSession is returned for an unknown or expired session token.
var ErrNoSession = errors.New("no such session")

// CreateSession starts a browser session for user and returns its token,
// which only the cookie holds; the database keeps its SHA-256.
func CreateSession(app core.App, user *core.Record) (string, error) {
	col, err := app.FindCachedCollectionByNameOrId(SessionsCollection)
	if err != nil {
		return "", fmt.Errorf("find sessions collection: %w", err)
	}
	token := security.RandomString(43)
	rec := core.NewRecord(col)
	rec.Set("user", user.Id)
	rec.Set("token_hash", HashSecret(token))
	rec.Set("expires_at", time.Now().UTC().Add(SessionTTL))
	if err := app.Save(rec); err != nil {
		return "", fmt.Errorf("save session: %w", err)
	}
	return token, nil
}

// UserBySession returns the user of a live session token.
func UserBySession(app core.App, token string) (*core.Record, error) {
	if token == "" || len(token) > 128 {
		return nil, ErrNoSession
	}
	rec, err := app.FindFirstRecordByData(SessionsCollection, "token_hash", HashSecret(token))
	if err != nil || !rec.GetDateTime("expires_at").Time().After(time.Now()) {
		return nil, ErrNoSession
	}
	user, err := app.FindRecordById(UsersCollection, rec.GetString("user"))
	if err != nil {
		return nil, ErrNoSession
	}
	return user, nil
}

// DeleteSession ends the session of token; an unknown token is no error.
func DeleteSession(app core.App, token string) error {
	if token == "" {
		return nil
	}
	_, err := app.NonconcurrentDB().Delete(SessionsCollection, dbx.HashExp{"token_hash": HashSecret(token)}).Execute()
	if err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	return nil
}

// PurgeExpiredSessions deletes sessions past their expiry.
func PurgeExpiredSessions(app core.App, now time.Time) error {
	_, err := app.NonconcurrentDB().Delete(SessionsCollection, dbx.NewExp("expires_at <= {:now}",
		dbx.Params{"now": now.UTC().Format(dateLayout)})).Execute()
	if err != nil {
		return fmt.Errorf("purge sessions: %w", err)
	}
	return nil
}
