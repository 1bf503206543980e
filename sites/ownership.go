package sites

import (
	"context"
	"crypto/subtle"
	"fmt"
	"time"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites/accounts"
)

// Claim ties the anonymous deployment slug to owner when token matches: it
// then no longer expires. Unknown, expired and already claimed slugs are
// ErrNotFound; a wrong token is ErrInvalidClaimToken; a full plan is
// ErrSlotLimit (enforced by the record hook that guards every save). ctx
// is the caller's request (the audit log names who claimed from it).
func (s *Service) Claim(ctx context.Context, owner *core.Record, slug, token string) (*core.Record, error) {
	var out *core.Record
	err := s.app.RunInTransaction(func(tx core.App) error {
		rec, err := Claimable(tx, slug, token)
		if err != nil {
			return err
		}
		if err := refuseTakenDown(rec); err != nil {
			return err
		}
		rec.Set(FieldOwner, owner.Id)
		rec.Set(FieldExpiresAt, "")
		rec.Set(FieldClaimTokenHash, "")
		if err := tx.SaveWithContext(context.WithoutCancel(ctx), rec); err != nil { // see Create
			return mapSaveError(err)
		}
		out = rec
		return nil
	})
	return out, err
}

// Claimable returns the anonymous, unexpired deployment slug when token is
// its claim token: ErrNotFound for unknown, expired and owned slugs,
// ErrInvalidClaimToken for a wrong token (compared in constant time).
func Claimable(app core.App, slug, token string) (*core.Record, error) {
	rec, err := app.FindFirstRecordByData(DeploymentsCollection, FieldSlug, slug)
	if err != nil || rec.GetString(FieldOwner) != "" || IsExpired(rec, time.Now()) {
		return nil, ErrNotFound
	}
	want := rec.GetString(FieldClaimTokenHash)
	if want == "" || token == "" || subtle.ConstantTimeCompare([]byte(want), []byte(accounts.HashSecret(token))) != 1 {
		return nil, ErrInvalidClaimToken
	}
	return rec, nil
}

// IsExpired reports whether an anonymous deployment record has passed its
// expiry at now.
func IsExpired(rec *core.Record, now time.Time) bool {
	return DeploymentOf(rec).Expired(now)
}

// FindOwned returns the deployment id owned by owner, or ErrNotFound (also
// when it exists but belongs to someone else, so ids do not leak).
func (s *Service) FindOwned(owner *core.Record, id string) (*core.Record, error) {
	rec, err := s.app.FindRecordById(DeploymentsCollection, id)
	if err != nil || owner == nil || rec.GetString(FieldOwner) != owner.Id {
		return nil, ErrNotFound
	}
	return rec, nil
}

// ListOwned returns owner's deployments, most recently updated first.
func (s *Service) ListOwned(owner *core.Record) ([]*core.Record, error) {
	recs, err := s.app.FindRecordsByFilter(DeploymentsCollection, FieldOwner+" = {:owner}", "-"+FieldUpdated+",-"+FieldCreated, 0, 0,
		dbx.Params{"owner": owner.Id})
	if err != nil {
		return nil, fmt.Errorf("list deployments: %w", err)
	}
	return recs, nil
}

// Delete removes a deployment. Its versions go with it (cascade) and the
// record hooks take the site offline and schedule its content for
// collection, so the API and the admin dashboard behave the same. ctx is
// the caller's request (the audit log names who deleted from it).
func (s *Service) Delete(ctx context.Context, rec *core.Record) error {
	if err := s.app.DeleteWithContext(context.WithoutCancel(ctx), rec); err != nil {
		return fmt.Errorf("delete deployment %s: %w", rec.Id, err)
	}
	return nil
}
