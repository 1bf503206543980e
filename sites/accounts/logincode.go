package accounts

import (
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"sync"
	"time"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/types"
	"golang.org/x/crypto/bcrypt"
)

// The fields of the login_codes collection (and FieldExpiresAt).
const (
	fieldCodeEmail    = "email"
	fieldCodeHash     = "code_hash"
	fieldCodeAttempts = "attempts"
)

// Sign-in codes.
const (
	// LoginCodesCollection holds pending sign-in codes.
	LoginCodesCollection = "login_codes"
	// LoginCodeDigits is the length of a code: 8 digits, so that even the
	// most guesses the limits allow per address stay hopeless.
	LoginCodeDigits = 8
	// LoginCodeTTL is how long a code may be used.
	LoginCodeTTL = 10 * time.Minute
	// MaxCodeAttempts is how many tries a code allows, the right one
	// included; after that many wrong ones the code is deleted.
	MaxCodeAttempts = 5
)

// ErrInvalidCode is the one answer for an unknown, expired, used, dead or
// wrong code, so an attacker learns nothing from which one it was.
var ErrInvalidCode = errors.New("invalid or expired code")

// NewLoginCode stores a fresh code for email (hashed with bcrypt) and
// returns the code's id and its plaintext, to be mailed. Earlier codes for
// the address stop working: only the newest can be guessed at.
func NewLoginCode(app core.App, email string) (id, code string, err error) {
	code, err = randomDigits(LoginCodeDigits)
	if err != nil {
		return "", "", err
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(code), bcrypt.DefaultCost)
	if err != nil {
		return "", "", fmt.Errorf("hash login code: %w", err)
	}
	col, err := app.FindCachedCollectionByNameOrId(LoginCodesCollection)
	if err != nil {
		return "", "", fmt.Errorf("find login_codes collection: %w", err)
	}
	rec := core.NewRecord(col)
	rec.Set(fieldCodeEmail, email)
	rec.Set(fieldCodeHash, string(hash))
	rec.Set(fieldCodeAttempts, 0)
	rec.Set(FieldExpiresAt, time.Now().UTC().Add(LoginCodeTTL))
	err = app.RunInTransaction(func(tx core.App) error {
		if _, err := tx.NonconcurrentDB().Delete(LoginCodesCollection, dbx.HashExp{fieldCodeEmail: email}).Execute(); err != nil {
			return fmt.Errorf("delete earlier login codes: %w", err)
		}
		if err := tx.Save(rec); err != nil {
			return fmt.Errorf("save login code: %w", err)
		}
		return nil
	})
	if err != nil {
		return "", "", err
	}
	return rec.Id, code, nil
}

// VerifyLoginCode checks code against the code stored as id and returns the
// address it was sent to. A code works once. Each try is counted before the
// comparison, in a transaction, so no more than MaxCodeAttempts guesses are
// ever compared, however many arrive at once; the last failed one deletes
// the code.
func VerifyLoginCode(app core.App, id, code string) (string, error) {
	code = strings.TrimSpace(code)
	if id == "" || code == "" || len(code) > 16 {
		return "", ErrInvalidCode
	}
	var rec *core.Record
	err := app.RunInTransaction(func(tx core.App) error {
		r, err := tx.FindRecordById(LoginCodesCollection, id)
		if err != nil {
			return ErrInvalidCode
		}
		if !r.GetDateTime(FieldExpiresAt).Time().After(time.Now()) || r.GetInt(fieldCodeAttempts) >= MaxCodeAttempts {
			return ErrInvalidCode
		}
		r.Set(fieldCodeAttempts, r.GetInt(fieldCodeAttempts)+1)
		if err := tx.Save(r); err != nil {
			return fmt.Errorf("count login code attempt: %w", err)
		}
		rec = r
		return nil
	})
	if err != nil {
		// Take as long as a real comparison, so that answers do not tell
		// real ids from made-up ones.
		_ = bcrypt.CompareHashAndPassword(dummyCodeHash(), []byte(code))
		return "", err
	}
	if bcrypt.CompareHashAndPassword([]byte(rec.GetString(fieldCodeHash)), []byte(code)) != nil {
		if rec.GetInt(fieldCodeAttempts) >= MaxCodeAttempts {
			_ = DeleteLoginCode(app, id)
		}
		return "", ErrInvalidCode
	}
	// Single use: only the request that deletes the row signs in.
	if err := DeleteLoginCode(app, id); err != nil {
		return "", ErrInvalidCode
	}
	return rec.GetString(fieldCodeEmail), nil
}

// dummyCodeHash is a bcrypt hash to compare against when there is no code.
var dummyCodeHash = sync.OnceValue(func() []byte {
	h, _ := bcrypt.GenerateFromPassword([]byte("no code"), bcrypt.DefaultCost)
	return h
})

// DummyLoginCodeWork does the hashing NewLoginCode does, for answers that
// must take as long as issuing a real code.
func DummyLoginCodeWork() {
	_, _ = bcrypt.GenerateFromPassword([]byte("no code"), bcrypt.DefaultCost)
}

// DeleteLoginCode deletes the code id (ErrInvalidCode when there is
// none): used, or never sent.
func DeleteLoginCode(app core.App, id string) error {
	res, err := app.NonconcurrentDB().Delete(LoginCodesCollection, dbx.HashExp{"id": id}).Execute()
	if err != nil {
		return fmt.Errorf("delete login code: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return ErrInvalidCode
	}
	return nil
}

// PurgeExpiredLoginCodes deletes codes past their expiry.
func PurgeExpiredLoginCodes(app core.App, now time.Time) error {
	_, err := app.NonconcurrentDB().Delete(LoginCodesCollection, dbx.NewExp("expires_at <= {:now}",
		dbx.Params{"now": now.UTC().Format(types.DefaultDateLayout)})).Execute()
	if err != nil {
		return fmt.Errorf("purge login codes: %w", err)
	}
	return nil
}

// randomDigits returns n random decimal digits from crypto/rand.
func randomDigits(n int) (string, error) {
	var b strings.Builder
	for range n {
		d, err := rand.Int(rand.Reader, big.NewInt(10))
		if err != nil {
			return "", fmt.Errorf("random digit: %w", err)
		}
		b.WriteByte(byte('0' + d.Int64()))
	}
	return b.String(), nil
}
