// Package accounts holds sitedrop's accounts: API keys (stored as SHA-256
// hashes), sign-in codes (bcrypt, single use, limited tries) and web
// sessions tied to a key, with the rules that use them on plain values:
//
//	signIn := &accounts.SignIn{App: app, Signup: true, MailCode: mail}
//	id, err := signIn.SendCode(email)               // ParseEmail first
//	_, key, _, err := signIn.Verify(id, code)       // ErrInvalidCode, ErrSignupClosed
//	err = sessions.Start(w, r, key, true)           // the session cookie
//	user := sessions.User(r)                        // nil when signed out
//	sessions.Flash(r, accounts.Flash{Text: "Saved"}) // for the next page
//
// Refusals are errors of this package, which hooks maps to the API's
// answers; the routes and pages that use it are in hooks.
package accounts

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/security"
)

// Collection names of accounts.
const (
	UsersCollection   = "users"
	APIKeysCollection = "api_keys"
)

// APIKeyPrefix starts every sitedrop API key, so keys are easy to spot in
// logs and secret scanners.
const APIKeyPrefix = "sd_"

// apiKeySecretLen is the number of random characters after the prefix
// (62 letters and digits each: about 238 bits).
const apiKeySecretLen = 40

// apiKeyDisplayLen is how much of a key is kept in clear to name it.
const apiKeyDisplayLen = len(APIKeyPrefix) + 8

// lastUsedResolution is how stale last_used_at may get before a request
// writes it again, so that busy keys do not write on every request.
const lastUsedResolution = time.Minute

// ErrKeyNotFound is returned when no API key matches.
var ErrKeyNotFound = errors.New("api key not found")

// HashSecret returns the lowercase hex SHA-256 of a secret (an API key, a
// session token; sites hashes claim tokens the same way): the only form in
// which secrets are stored.
func HashSecret(secret string) string {
	return security.SHA256(secret)
}

// CreateAPIKey makes a new key for user and returns its plaintext, which is
// shown once and never stored. ctx is the caller's request (the audit log
// names who created the key from it).
func CreateAPIKey(ctx context.Context, app core.App, user *core.Record, name string) (string, *core.Record, error) {
	col, err := app.FindCachedCollectionByNameOrId(APIKeysCollection)
	if err != nil {
		return "", nil, fmt.Errorf("find api_keys collection: %w", err)
	}
	plain := APIKeyPrefix + security.RandomString(apiKeySecretLen)
	rec := core.NewRecord(col)
	rec.Set(FieldUser, user.Id)
	rec.Set(FieldName, name)
	rec.Set(FieldPrefix, plain[:apiKeyDisplayLen])
	rec.Set(FieldHash, HashSecret(plain))
	if err := app.SaveWithContext(context.WithoutCancel(ctx), rec); err != nil {
		return "", nil, fmt.Errorf("save api key: %w", err)
	}
	return plain, rec, nil
}

// UserByAPIKey returns the user a plaintext key belongs to, or
// ErrKeyNotFound. It refreshes the key's last_used_at at most once a
// minute.
func UserByAPIKey(app core.App, plain string) (*core.Record, error) {
	_, user, err := APIKeyByPlain(app, plain)
	return user, err
}

// APIKeyByPlain returns the key record of a plaintext key and its user, or
// ErrKeyNotFound (a *BannedError for a banned account's key), refreshing
// last_used_at at most once a minute.
func APIKeyByPlain(app core.App, plain string) (key, user *core.Record, err error) {
	if !strings.HasPrefix(plain, APIKeyPrefix) || len(plain) != len(APIKeyPrefix)+apiKeySecretLen {
		return nil, nil, ErrKeyNotFound
	}
	h := HashSecret(plain)
	// An indexed equality lookup on the SHA-256 of a 238-bit secret: its
	// timing tells an attacker nothing usable.
	key, err = app.FindFirstRecordByData(APIKeysCollection, FieldHash, h)
	if err != nil {
		return nil, nil, ErrKeyNotFound
	}
	user, err = app.FindRecordById(UsersCollection, key.GetString(FieldUser))
	if err != nil {
		return nil, nil, ErrKeyNotFound
	}
	if err := CheckNotBanned(user); err != nil {
		return nil, nil, err
	}
	if last := key.GetDateTime(FieldLastUsedAt); last.IsZero() || time.Since(last.Time()) > lastUsedResolution {
		key.Set(FieldLastUsedAt, time.Now().UTC())
		if err := app.SaveNoValidate(key); err != nil {
			app.Logger().Warn("update api key last_used_at", "error", err)
		}
	}
	return key, user, nil
}

// ListAPIKeys returns user's keys, newest first.
func ListAPIKeys(app core.App, user *core.Record) ([]*core.Record, error) {
	recs, err := app.FindRecordsByFilter(APIKeysCollection, FieldUser+" = {:u}", "-"+FieldCreated, 0, 0, dbx.Params{"u": user.Id})
	if err != nil {
		return nil, fmt.Errorf("list api keys: %w", err)
	}
	return recs, nil
}

// RevokeAPIKey deletes the one key whose display prefix is prefix. It
// refuses an ambiguous prefix. ctx is the caller's (the audit log names
// who revoked the key from it).
func RevokeAPIKey(ctx context.Context, app core.App, prefix string) (*core.Record, error) {
	recs, err := app.FindRecordsByFilter(APIKeysCollection, FieldPrefix+" = {:p}", "", 0, 0, dbx.Params{"p": prefix})
	if err != nil {
		return nil, fmt.Errorf("find api key: %w", err)
	}
	switch len(recs) {
	case 0:
		return nil, ErrKeyNotFound
	case 1:
	default:
		return nil, fmt.Errorf("prefix %q matches %d keys", prefix, len(recs))
	}
	if err := app.DeleteWithContext(context.WithoutCancel(ctx), recs[0]); err != nil {
		return nil, fmt.Errorf("delete api key: %w", err)
	}
	return recs[0], nil
}
