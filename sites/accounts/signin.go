package accounts

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"

	"github.com/pocketbase/ozzo-validation/v4/is"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/security"
)

// The refusals of a sign-in by e-mail code (ErrInvalidCode too).
var (
	// ErrEmailRequired refuses a sign-in without an address.
	ErrEmailRequired = errors.New("email is required")
	// ErrEmailInvalid refuses an address that is not a bare e-mail
	// address (see ParseEmail).
	ErrEmailInvalid = errors.New("email is not a valid address")
	// ErrCodeIDRequired refuses a code without the id of its sign-in.
	ErrCodeIDRequired = errors.New("otp_id is required")
	// ErrCodeRequired refuses a sign-in without a code.
	ErrCodeRequired = errors.New("code is required")
	// ErrSignupClosed refuses a right code for an address without an
	// account when sign-up is closed.
	ErrSignupClosed = errors.New("sign-up is closed")
)

// MailError is a sign-in e-mail that could not be sent. Uncounted says
// that no code stands from the attempt, so a limit on codes may give it
// back.
type MailError struct {
	Err       error
	Uncounted bool
}

func (e *MailError) Error() string { return "send sign-in mail: " + e.Err.Error() }
func (e *MailError) Unwrap() error { return e.Err }

// SignIn signs people in by a code mailed to their address, creating
// their account on first use when sign-up is open.
//
//	id, err := signIn.SendCode(email)             // mails a code
//	plain, key, user, err := signIn.Verify(ctx, id, c) // a new API key
type SignIn struct {
	App core.App
	// Signup lets an unknown address make an account.
	Signup bool
	// MailCode mails a sign-in code to an address.
	MailCode func(to, code string) error
	// MailNoAccount tells an address without an account, with sign-up
	// closed, that it cannot sign in.
	MailNoAccount func(to string) error
	// CheckSignup, when set, may refuse a new account for an address
	// (its domain is blocked, say): its error is Verify's. It is asked
	// only when an account would be made, so existing accounts keep
	// signing in.
	CheckSignup func(email string) error
	// Acting, when set, returns the context of the save of the new key
	// once the account signing in is known: ctx (the caller's request)
	// naming user as the one who acts, for the audit log. Unset, the key
	// is saved with ctx as it is.
	Acting func(ctx context.Context, user *core.Record) context.Context
}

// ParseEmail accepts a bare address (no display name) of at most 254
// characters that PocketBase's email fields also accept, and returns it
// normalised; else ErrEmailRequired or ErrEmailInvalid.
func ParseEmail(raw string) (string, error) {
	if raw == "" {
		return "", ErrEmailRequired
	}
	s := NormalizeEmail(raw)
	if len(s) > 254 {
		return "", ErrEmailInvalid
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s || a.Name != "" || is.EmailFormat.Validate(s) != nil {
		return "", ErrEmailInvalid
	}
	return s, nil
}

// idAlphabet is the alphabet of PocketBase record ids.
const idAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

// NewRecordID is a random id shaped as a record's, for an answer that must
// look like one (a code never sent, a submission dropped).
func NewRecordID() string { return security.RandomStringWithAlphabet(15, idAlphabet) }

// ValidCodeID tells a well-formed sign-in code id (a record id: 15
// lowercase letters and digits).
func ValidCodeID(s string) bool {
	if len(s) != 15 {
		return false
	}
	for _, c := range s {
		if !strings.ContainsRune(idAlphabet, c) {
			return false
		}
	}
	return true
}

// SendCode mails a sign-in code to email (see ParseEmail) and returns the
// code's id. Known and unknown addresses get the same answer after the
// same work; with sign-up closed an unknown address is mailed that it has
// no account, and its id is made up. A mail that could not be sent is a
// *MailError.
func (s *SignIn) SendCode(email string) (string, error) {
	if _, err := FindUserByEmail(s.App, email); err != nil && !s.Signup {
		DummyLoginCodeWork()
		if err := s.MailNoAccount(email); err != nil {
			return "", &MailError{Err: err, Uncounted: true}
		}
		return NewRecordID(), nil
	}
	id, code, err := NewLoginCode(s.App, email)
	if err != nil {
		return "", err
	}
	if err := s.MailCode(email, code); err != nil {
		// no code was sent: none stays valid
		return "", &MailError{Err: err, Uncounted: DeleteLoginCode(s.App, id) == nil}
	}
	return id, nil
}

// Verify signs in with the code of id: it creates the account on first
// use when sign-up is open (else ErrSignupClosed) and makes an API key for
// the new browser session. It returns the key's plaintext, the key and its
// user; a wrong code is ErrInvalidCode, a banned account's a *BannedError.
// ctx is the caller's request (see Acting).
func (s *SignIn) Verify(ctx context.Context, id, code string) (plain string, key, user *core.Record, err error) {
	switch {
	case id == "":
		return "", nil, nil, ErrCodeIDRequired
	case code == "":
		return "", nil, nil, ErrCodeRequired
	}
	email, err := VerifyLoginCode(s.App, id, code)
	if err != nil {
		return "", nil, nil, err
	}
	user, err = FindUserByEmail(s.App, email)
	if err == nil {
		if err := CheckNotBanned(user); err != nil {
			return "", nil, nil, err
		}
	} else {
		if !s.Signup {
			return "", nil, nil, ErrSignupClosed
		}
		if s.CheckSignup != nil {
			if err := s.CheckSignup(email); err != nil {
				return "", nil, nil, err
			}
		}
		if user, _, err = UpsertUser(s.App, email, ""); err != nil {
			// a concurrent first sign-in of the same address created it
			if user, err = FindUserByEmail(s.App, email); err != nil {
				return "", nil, nil, fmt.Errorf("sign in %s: %w", email, err)
			}
		}
	}
	if s.Acting != nil {
		ctx = s.Acting(ctx, user)
	}
	plain, key, err = CreateAPIKey(ctx, s.App, user, "Web sign-in "+time.Now().UTC().Format("2006-01-02 15:04"))
	if err != nil {
		return "", nil, nil, err
	}
	return plain, key, user, nil
}
