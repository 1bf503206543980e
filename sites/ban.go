package sites

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites/accounts"
)

// ErrUserNotFound: no account has the id an admin named.
var ErrUserNotFound = errors.New("user not found")

// FindUser returns the account id, or an error that is ErrUserNotFound.
func FindUser(app core.App, id string) (*core.Record, error) {
	rec, err := app.FindRecordById(accounts.UsersCollection, id)
	if err != nil {
		return nil, fmt.Errorf("user %q: %w", id, errors.Join(ErrUserNotFound, err))
	}
	return rec, nil
}

// CheckBanReason validates a ban's reason (already trimmed) as a
// takedown's (CheckTakedownReason): it becomes the reason its sites are
// taken down for.
func CheckBanReason(reason string) error {
	err := CheckTakedownReason(reason)
	var fe *FieldError
	if errors.As(err, &fe) {
		return &FieldError{Field: accounts.FieldBannedReason, Msg: strings.Replace(fe.Msg, "a takedown", "a ban", 1)}
	}
	return err
}

// Ban bans the account user for reason (trimmed, see CheckBanReason), recording by (a superuser's e-mail) and
// the time, and returns the saved record. Banning a banned account again
// changes its reason only. The ban itself is the user's banned_reason:
// the account's sign-in codes, API keys and browser sessions are refused
// from the next request on (accounts.CheckNotBanned), and the record
// hooks call FollowBan, which takes its sites down, whoever saved it
// (this service or the admin dashboard).
func (s *Service) Ban(ctx context.Context, user *core.Record, reason, by string) (*core.Record, error) {
	reason = strings.TrimSpace(reason)
	if err := CheckBanReason(reason); err != nil {
		return nil, err
	}
	return s.setBan(ctx, user, reason, by)
}

// Unban lifts the ban of the account user, and (through the record
// hooks' FollowBan) restores the sites the ban took down. Unbanning an
// account that is not banned changes nothing.
func (s *Service) Unban(ctx context.Context, user *core.Record) (*core.Record, error) {
	return s.setBan(ctx, user, "", "")
}

// setBan saves reason ("" unbans) and by on the account user.
func (s *Service) setBan(ctx context.Context, user *core.Record, reason, by string) (*core.Record, error) {
	fresh, err := FindUser(s.app, user.Id)
	if err != nil {
		return nil, err
	}
	if accounts.UserOf(fresh).BannedReason() == reason {
		return fresh, nil
	}
	fresh.Set(accounts.FieldBannedReason, reason)
	if reason != "" {
		fresh.Set(accounts.FieldBannedAt, "") // a new reason is a new ban: stamped again
		fresh.Set(accounts.FieldBannedBy, by)
	}
	if err := s.app.SaveWithContext(ctx, fresh); err != nil {
		return nil, fmt.Errorf("save the ban of %s: %w", user.Id, err)
	}
	return fresh, nil
}

// FollowBan brings the sites of the account user in line with its ban,
// after a save that changed it (orig is the record before the save): a
// ban takes down each of its sites that is not taken down already, with
// the ban's reason (by TakeDown, so every host, the replicas and the
// audit log follow); a lifted ban restores those of its sites whose
// takedown is the ban's (its reason, on or after the ban's time), and
// leaves down a site an administrator took down for its own reason. A
// ban whose reason changed retakes nothing: the sites keep the first
// reason. It returns how many sites it changed.
func (s *Service) FollowBan(ctx context.Context, orig, user *core.Record) (int, error) {
	was, now := accounts.UserOf(orig), accounts.UserOf(user)
	if was.Banned() == now.Banned() {
		return 0, nil
	}
	recs, err := s.app.FindAllRecords(DeploymentsCollection, dbx.HashExp{FieldOwner: user.Id})
	if err != nil {
		return 0, fmt.Errorf("find the sites of %s: %w", user.Id, err)
	}
	n := 0
	var errs []error
	for _, rec := range recs {
		d := DeploymentOf(rec)
		switch {
		case now.Banned() && !d.TakenDown():
			_, err = s.TakeDown(ctx, rec, now.BannedReason(), now.BannedBy())
		case !now.Banned() && d.TakenDown() && d.TakedownReason() == was.BannedReason() &&
			!d.TakenDownAt().Before(was.BannedAt().Truncate(1e6)):
			_, err = s.Restore(ctx, rec)
		default:
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("site %s: %w", d.Slug(), err))
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}
