package accounts

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pocketbase/pocketbase/core"
)

// The fields of the users, api_keys and web sessions collections: the
// only place their names are written (PocketBase's core/otp_model.go
// idiom; the sign-in codes' are in logincode.go).
const (
	FieldPlan       = "plan"
	FieldUser       = "user"
	FieldName       = "name"
	FieldPrefix     = "prefix"
	FieldHash       = "hash"
	FieldLastUsedAt = "last_used_at"
	FieldAPIKey     = "api_key"
	FieldOwnsKey    = "owns_key"
	FieldTokenHash  = "token_hash"
	FieldExpiresAt  = "expires_at"
	FieldCreated    = "created"
	FieldUserAgent  = "user_agent"
)

// User is an account: a record of the users collection.
type User struct {
	core.BaseRecordProxy
}

// UserOf wraps rec, a record of the users collection (nil for nil).
func UserOf(rec *core.Record) *User {
	if rec == nil {
		return nil
	}
	u := &User{}
	u.SetProxyRecord(rec)
	return u
}

// NewUser is a blank account of the users collection.
func NewUser(col *core.Collection) *User { return UserOf(core.NewRecord(col)) }

// Plan is the account's plan ("" reads as the free plan).
func (u *User) Plan() string { return u.GetString(FieldPlan) }

// SetPlan sets the account's plan.
func (u *User) SetPlan(p string) { u.Set(FieldPlan, p) }

// APIKey is one API key of an account: a record of the api_keys
// collection. Only its hash and display prefix are stored.
type APIKey struct {
	core.BaseRecordProxy
}

// APIKeyOf wraps rec, a record of the api_keys collection (nil for nil).
func APIKeyOf(rec *core.Record) *APIKey {
	if rec == nil {
		return nil
	}
	k := &APIKey{}
	k.SetProxyRecord(rec)
	return k
}

// UserID is the id of the key's account.
func (k *APIKey) UserID() string { return k.GetString(FieldUser) }

// Name is the key's name, given by its owner.
func (k *APIKey) Name() string { return k.GetString(FieldName) }

// Prefix is the start of the key kept in clear to name it.
func (k *APIKey) Prefix() string { return k.GetString(FieldPrefix) }

// LastUsedAt is when the key was last used (to a minute); zero when never.
func (k *APIKey) LastUsedAt() time.Time { return k.GetDateTime(FieldLastUsedAt).Time() }

// Created is when the key was made.
func (k *APIKey) Created() time.Time { return k.GetDateTime(FieldCreated).Time() }

// Session is one web session: a record of the web sessions collection.
type Session struct {
	core.BaseRecordProxy
}

// SessionOf wraps rec, a record of the web sessions collection (nil for
// nil).
func SessionOf(rec *core.Record) *Session {
	if rec == nil {
		return nil
	}
	s := &Session{}
	s.SetProxyRecord(rec)
	return s
}

// UserID is the id of the session's account.
func (s *Session) UserID() string { return s.GetString(FieldUser) }

// APIKeyID is the id of the API key the session stands on.
func (s *Session) APIKeyID() string { return s.GetString(FieldAPIKey) }

// OwnsKey reports whether the session made its key (a sign-in by code),
// so that ending it revokes the key.
func (s *Session) OwnsKey() bool { return s.GetBool(FieldOwnsKey) }

// Created is when the session started.
func (s *Session) Created() time.Time { return s.GetDateTime(FieldCreated).Time() }

// ExpiresAt is when the session ends.
func (s *Session) ExpiresAt() time.Time { return s.GetDateTime(FieldExpiresAt).Time() }

// UserAgent is the User-Agent the session signed in with (cut to
// MaxUserAgentLen bytes; "" for sessions older than the field).
func (s *Session) UserAgent() string { return s.GetString(FieldUserAgent) }

// Client names the browser and system of the session, from its
// User-Agent.
func (s *Session) Client() Client { return ParseUserAgent(s.UserAgent()) }

// ErrNotOwned is returned when a key or session does not exist or belongs
// to another account (the two read the same, so ids do not leak).
var ErrNotOwned = errors.New("not found")

// FindAPIKeyOf returns user's API key id, or an error that is ErrNotOwned.
func FindAPIKeyOf(app core.App, userID, id string) (*APIKey, error) {
	rec, err := app.FindRecordById(APIKeysCollection, id)
	if err != nil {
		return nil, fmt.Errorf("api key %q: %w", id, errors.Join(ErrNotOwned, err))
	}
	k := APIKeyOf(rec)
	if k.UserID() != userID {
		return nil, fmt.Errorf("api key %q of another account: %w", id, ErrNotOwned)
	}
	return k, nil
}

// FindAPIKey returns the API key id, or an error that is ErrKeyNotFound.
func FindAPIKey(app core.App, id string) (*APIKey, error) {
	rec, err := app.FindRecordById(APIKeysCollection, id)
	if err != nil {
		return nil, fmt.Errorf("api key %q: %w", id, errors.Join(ErrKeyNotFound, err))
	}
	return APIKeyOf(rec), nil
}

// FindLiveSessionOf returns user's unexpired session id at now, or an
// error that is ErrNotOwned.
func FindLiveSessionOf(app core.App, userID, id string, now time.Time) (*Session, error) {
	rec, err := app.FindRecordById(SessionsCollection, id)
	if err != nil {
		return nil, fmt.Errorf("session %q: %w", id, errors.Join(ErrNotOwned, err))
	}
	s := SessionOf(rec)
	if s.UserID() != userID || !s.ExpiresAt().After(now) {
		return nil, fmt.Errorf("session %q of another account or ended: %w", id, ErrNotOwned)
	}
	return s, nil
}

// DeleteAPIKey deletes the key k (a session standing on it ends with it,
// by cascade). ctx is the caller's request (the audit log names who
// revoked the key from it).
func DeleteAPIKey(ctx context.Context, app core.App, k *APIKey) error {
	if err := app.DeleteWithContext(context.WithoutCancel(ctx), k); err != nil {
		return fmt.Errorf("delete api key %s: %w", k.Id, err)
	}
	return nil
}
