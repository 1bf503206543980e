package sites

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/pocketbase/pocketbase/core"
)

// The takedown's fields of the deployments collection (see
// Service.TakeDown): the reason is the switch, the other two record when
// and by whom.
const (
	// FieldTakedownReason is why an administrator took the site down;
	// "" while it is not taken down.
	FieldTakedownReason = "takedown_reason"
	// FieldTakenDownAt is when the site was taken down (empty when not).
	FieldTakenDownAt = "taken_down_at"
	// FieldTakenDownBy names who took it down: a superuser's e-mail.
	FieldTakenDownBy = "taken_down_by"
)

// MaxTakedownReasonLen bounds a takedown's reason, in runes (the
// collection's field holds as many).
const MaxTakedownReasonLen = 500

// ErrTakenDown: an administrator took the site down, so it cannot be
// redeployed, renamed, paused, resumed, promoted or claimed, and its forms
// take no submissions, until it is restored.
var ErrTakenDown = errors.New("site is taken down")

// TakenDown reports whether an administrator has taken the site down.
func (d *Deployment) TakenDown() bool { return d.TakedownReason() != "" }

// TakedownReason is why the site was taken down, "" when it is not.
func (d *Deployment) TakedownReason() string { return d.GetString(FieldTakedownReason) }

// TakenDownAt is when the site was taken down, zero when it is not.
func (d *Deployment) TakenDownAt() time.Time { return d.GetDateTime(FieldTakenDownAt).Time() }

// TakenDownBy names who took the site down ("" when unknown or not).
func (d *Deployment) TakenDownBy() string { return d.GetString(FieldTakenDownBy) }

// CheckTakedownReason validates a takedown's reason (already trimmed): 1
// to MaxTakedownReasonLen runes of text without control characters or
// bidirectional overrides, as it is shown to visitors and mailed.
func CheckTakedownReason(reason string) error {
	if reason == "" {
		return &FieldError{Field: FieldTakedownReason, Msg: "a takedown needs a reason"}
	}
	if !utf8.ValidString(reason) {
		return &FieldError{Field: FieldTakedownReason, Msg: "reason is not valid UTF-8"}
	}
	if n := utf8.RuneCountInString(reason); n > MaxTakedownReasonLen {
		return &FieldError{Field: FieldTakedownReason, Msg: fmt.Sprintf("reason is %d characters long, at most %d", n, MaxTakedownReasonLen)}
	}
	for _, r := range reason {
		if unicode.IsControl(r) || (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069) {
			return &FieldError{Field: FieldTakedownReason, Msg: fmt.Sprintf("reason contains a control character (U+%04X)", r)}
		}
	}
	return nil
}

// FollowTakedown keeps the takedown's fields consistent on every save of
// the deployment rec (from the service, the API or the dashboard), by
// the given superuser (by; "" when not known): a reason set or changed
// stamps taken_down_at with now and taken_down_by with by (when known),
// a reason emptied (a restore) clears both. The reason is trimmed.
func FollowTakedown(rec *core.Record, by string, now time.Time) {
	d := DeploymentOf(rec)
	reason := strings.TrimSpace(d.TakedownReason())
	rec.Set(FieldTakedownReason, reason)
	if reason == "" {
		rec.Set(FieldTakenDownAt, "")
		rec.Set(FieldTakenDownBy, "")
		return
	}
	if rec.IsNew() || !d.Original().TakenDown() || d.TakenDownAt().IsZero() {
		rec.Set(FieldTakenDownAt, now)
		if by != "" {
			rec.Set(FieldTakenDownBy, by)
		}
	}
}

// CheckTakenDownWrite refuses, with an error wrapping ErrTakenDown, a
// save of the deployment rec that changes what a taken-down site is or
// serves while it stays taken down: its slug, live version, pause or
// owner (a redeploy, a rename, a resume, a promote or a rollback, a
// claim). A save that restores it (empties the reason) passes, as do the
// other fields (settings, protection, notifications). The record hooks
// run it for every writer, the dashboard included.
func CheckTakenDownWrite(rec *core.Record) error {
	d := DeploymentOf(rec)
	if rec.IsNew() || !d.Original().TakenDown() || !d.TakenDown() {
		return nil
	}
	for _, f := range []string{FieldSlug, FieldLiveVersion, FieldPaused, FieldOwner} {
		if rec.Original().Get(f) != rec.Get(f) {
			return fmt.Errorf("%s of %s cannot change: %w", f, d.Original().Slug(), ErrTakenDown)
		}
	}
	return nil
}

// CheckNewVersion refuses, with an error wrapping ErrTakenDown, a new
// version (a deploy, a draft among them) of a taken-down deployment.
// The record hooks run it on every version created, with the event of
// its save (the deployment is read once for all of the save's execute
// hooks: DeploymentOfSave).
func CheckNewVersion(e *core.RecordEvent) error {
	dep, err := DeploymentOfSave(e)
	if err != nil {
		return nil // the collection's relation refuses it
	}
	if dep.TakenDown() {
		return fmt.Errorf("new version of %s: %w", dep.Slug(), ErrTakenDown)
	}
	return nil
}

// refuseTakenDown is ErrTakenDown, wrapped, when rec is taken down: the
// services' own check (a no-op write included), before the record
// hooks' (CheckTakenDownWrite) on what they save.
func refuseTakenDown(rec *core.Record) error {
	if d := DeploymentOf(rec); d.TakenDown() {
		return fmt.Errorf("%s: %w", d.Slug(), ErrTakenDown)
	}
	return nil
}

// TakeDown takes the deployment rec down for reason (trimmed, see
// CheckTakedownReason), recording by (a superuser's e-mail) and the time,
// and returns the saved record. Every host of the site (its slug, its
// previews, its custom domains, the old slugs it still redirects from,
// and the replicas') answers the takedown page (410) with the reason; its
// forms refuse submissions; its slot, slug, versions, content and
// settings are kept until it is restored or deleted. Taking down a
// taken-down site again changes its reason. The record hooks mail the
// owner. This is what the moderation page calls.
func (s *Service) TakeDown(ctx context.Context, rec *core.Record, reason, by string) (*core.Record, error) {
	reason = strings.TrimSpace(reason)
	if err := CheckTakedownReason(reason); err != nil {
		return nil, err
	}
	return s.setTakedown(ctx, rec, reason, by)
}

// Restore lifts the takedown of the deployment rec: it is served again
// as before (paused still if it was) and takes writes again. Restoring a
// site that is not taken down changes nothing. It returns the saved
// record. This is what the moderation page calls.
func (s *Service) Restore(ctx context.Context, rec *core.Record) (*core.Record, error) {
	return s.setTakedown(ctx, rec, "", "")
}

// setTakedown saves reason ("" restores) and by on the deployment rec,
// with its lock held (no replace in between). The save carries ctx, so
// the record hooks know who asked (the audit log's actor).
func (s *Service) setTakedown(ctx context.Context, rec *core.Record, reason, by string) (*core.Record, error) {
	unlock := s.lockDeployment(rec.Id)
	defer unlock()
	var out *core.Record
	err := s.app.RunInTransaction(func(tx core.App) error {
		fresh, err := tx.FindRecordById(DeploymentsCollection, rec.Id)
		if err != nil {
			return ErrNotFound
		}
		out = fresh
		d := DeploymentOf(fresh)
		if d.TakedownReason() == reason {
			return nil
		}
		fresh.Set(FieldTakedownReason, reason)
		if reason != "" {
			// a new reason is a new takedown: stamped again
			fresh.Set(FieldTakenDownAt, "")
			fresh.Set(FieldTakenDownBy, by)
		}
		if err := tx.SaveWithContext(ctx, fresh); err != nil {
			return fmt.Errorf("save the takedown of %s: %w", rec.Id, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
