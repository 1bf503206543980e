package accounts

import (
	"errors"
	"strings"
	"time"

	"github.com/pocketbase/pocketbase/core"
)

// The ban's fields of the users collection (see sites.Service.Ban): the
// reason is the switch, as a deployment's takedown_reason is; the other
// two record when and by whom.
const (
	// FieldBannedReason is why an administrator banned the account; ""
	// while it is not banned.
	FieldBannedReason = "banned_reason"
	// FieldBannedAt is when the account was banned (empty when not).
	FieldBannedAt = "banned_at"
	// FieldBannedBy names who banned it: a superuser's e-mail.
	FieldBannedBy = "banned_by"
)

// ErrBanned: the account is banned. A banned account cannot sign in
// (its codes are refused), and its API keys and browser sessions stop
// working, until it is unbanned. Refusals wrap it in a *BannedError.
var ErrBanned = errors.New("account is banned")

// BannedError refuses a banned account; it says why.
type BannedError struct{ Reason string }

func (e *BannedError) Error() string { return "account is banned: " + e.Reason }

// Unwrap makes a BannedError ErrBanned.
func (e *BannedError) Unwrap() error { return ErrBanned }

// Banned reports whether an administrator has banned the account.
func (u *User) Banned() bool { return u.BannedReason() != "" }

// BannedReason is why the account was banned, "" when it is not.
func (u *User) BannedReason() string { return u.GetString(FieldBannedReason) }

// BannedAt is when the account was banned, zero when it is not.
func (u *User) BannedAt() time.Time { return u.GetDateTime(FieldBannedAt).Time() }

// BannedBy names who banned the account ("" when unknown or not).
func (u *User) BannedBy() string { return u.GetString(FieldBannedBy) }

// CheckNotBanned is a *BannedError when user is banned, nil otherwise
// (nil for nil). Every way in (a sign-in code, an API key, a browser
// session) asks it, so a ban works at once.
func CheckNotBanned(user *core.Record) error {
	if user == nil {
		return nil
	}
	if u := UserOf(user); u.Banned() {
		return &BannedError{Reason: u.BannedReason()}
	}
	return nil
}

// FollowBan keeps the ban's fields consistent on every save of the user
// rec (from the service, the API or the dashboard), by the given
// superuser (by; "" when not known): a reason set stamps banned_at with
// now and banned_by with by (when known), a reason emptied (an unban)
// clears both. The reason is trimmed.
func FollowBan(rec *core.Record, by string, now time.Time) {
	u := UserOf(rec)
	reason := strings.TrimSpace(u.BannedReason())
	rec.Set(FieldBannedReason, reason)
	if reason == "" {
		rec.Set(FieldBannedAt, "")
		rec.Set(FieldBannedBy, "")
		return
	}
	if rec.IsNew() || !UserOf(rec.Original()).Banned() || u.BannedAt().IsZero() {
		rec.Set(FieldBannedAt, now)
		if by != "" {
			rec.Set(FieldBannedBy, by)
		}
	}
}
