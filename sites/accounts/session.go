package accounts

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/security"
	"github.com/pocketbase/pocketbase/tools/types"
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

// CreateSession starts a browser session for the owner of key and returns
// its token, which only the cookie holds; the database keeps its SHA-256.
// The session ends when key is revoked; ownsKey says the key was made for
// this session alone, so signing out revokes it too. userAgent is the
// browser's User-Agent, kept (cut to MaxUserAgentLen bytes) to name it.
func CreateSession(app core.App, key *core.Record, ownsKey bool, userAgent string) (string, error) {
	col, err := app.FindCachedCollectionByNameOrId(SessionsCollection)
	if err != nil {
		return "", fmt.Errorf("find sessions collection: %w", err)
	}
	token := security.RandomString(43)
	rec := core.NewRecord(col)
	rec.Set(FieldUser, key.GetString(FieldUser))
	rec.Set(FieldAPIKey, key.Id)
	rec.Set(FieldOwnsKey, ownsKey)
	rec.Set(FieldTokenHash, HashSecret(token))
	rec.Set(FieldExpiresAt, time.Now().UTC().Add(SessionTTL))
	rec.Set(FieldUserAgent, truncateUserAgent(userAgent))
	if err := app.Save(rec); err != nil {
		return "", fmt.Errorf("save session: %w", err)
	}
	return token, nil
}

// UserBySession returns the user of a live session token (a
// *BannedError for a banned account's).
func UserBySession(app core.App, token string) (*core.Record, error) {
	if token == "" || len(token) > 128 {
		return nil, ErrNoSession
	}
	rec, err := app.FindFirstRecordByData(SessionsCollection, FieldTokenHash, HashSecret(token))
	if err != nil || !rec.GetDateTime(FieldExpiresAt).Time().After(time.Now()) {
		return nil, ErrNoSession
	}
	user, err := app.FindRecordById(UsersCollection, rec.GetString(FieldUser))
	if err != nil {
		return nil, ErrNoSession
	}
	if err := CheckNotBanned(user); err != nil {
		return nil, err // a banned account's session is signed out
	}
	return user, nil
}

// DeleteSession ends the session of token, and revokes its key when the
// key was made for it; an unknown token is no error. ctx is the caller's
// request (see EndSession).
func DeleteSession(ctx context.Context, app core.App, token string) error {
	if token == "" {
		return nil
	}
	rec, err := app.FindFirstRecordByData(SessionsCollection, FieldTokenHash, HashSecret(token))
	if err != nil {
		return nil
	}
	return EndSession(ctx, app, rec)
}

// EndSession ends the session rec, and revokes its key when the key was
// made for it (the session then goes with its key, by cascade). ctx is
// the caller's request (the audit log names who revoked the key from it).
func EndSession(ctx context.Context, app core.App, rec *core.Record) error {
	if rec.GetBool(FieldOwnsKey) {
		if key, err := app.FindRecordById(APIKeysCollection, rec.GetString(FieldAPIKey)); err == nil {
			if err := app.DeleteWithContext(context.WithoutCancel(ctx), key); err != nil {
				return fmt.Errorf("revoke session key: %w", err)
			}
			return nil
		}
	}
	if err := app.Delete(rec); err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	return nil
}

// ListSessions returns user's live sessions (not expired), newest first.
func ListSessions(app core.App, user *core.Record) ([]*core.Record, error) {
	recs, err := app.FindRecordsByFilter(SessionsCollection, FieldUser+" = {:u} && "+FieldExpiresAt+" > {:now}", "-"+FieldCreated, 0, 0,
		dbx.Params{"u": user.Id, "now": time.Now().UTC().Format(types.DefaultDateLayout)})
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	return recs, nil
}

// IsSessionOf reports whether rec is the session of token.
func IsSessionOf(rec *core.Record, token string) bool {
	return token != "" && rec.GetString(FieldTokenHash) == HashSecret(token)
}

// PurgeExpiredSessions deletes sessions past their expiry.
func PurgeExpiredSessions(app core.App, now time.Time) error {
	_, err := app.NonconcurrentDB().Delete(SessionsCollection, dbx.NewExp("expires_at <= {:now}",
		dbx.Params{"now": now.UTC().Format(types.DefaultDateLayout)})).Execute()
	if err != nil {
		return fmt.Errorf("purge sessions: %w", err)
	}
	return nil
}

// ListOwnAPIKeys returns the API keys user made, newest first: the keys
// that browser sessions made for themselves (owns_key) are the sessions',
// not the user's, and are left out.
func ListOwnAPIKeys(app core.App, user *core.Record) ([]*APIKey, error) {
	keys, err := ListAPIKeys(app, user)
	if err != nil {
		return nil, err
	}
	recs, err := app.FindRecordsByFilter(SessionsCollection, FieldUser+" = {:u} && "+FieldOwnsKey+" = true", "", 0, 0, dbx.Params{"u": user.Id})
	if err != nil {
		return nil, fmt.Errorf("list session keys: %w", err)
	}
	sessionKeys := make(map[string]bool, len(recs))
	for _, r := range recs {
		sessionKeys[SessionOf(r).APIKeyID()] = true
	}
	var out []*APIKey
	for _, k := range keys {
		if !sessionKeys[k.Id] {
			out = append(out, APIKeyOf(k))
		}
	}
	return out, nil
}
