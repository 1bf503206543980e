package sites

import (
	"context"
	"errors"
	"fmt"

	"github.com/pocketbase/pocketbase/core"
)

// ErrPaused: the site is paused by its owner, so its forms take no
// submissions (its hosts answer the paused page).
var ErrPaused = errors.New("site is paused")

// SetPaused pauses (on) or resumes the deployment rec and returns the
// saved record. A paused site keeps its slug, slot, versions, previews,
// domains and settings; every host of it answers the paused page (503)
// and its forms refuse submissions until it is resumed. Deploys still
// work (the new version shows once resumed). Pausing a paused site, or
// resuming a running one, changes nothing. ctx is the caller's request
// (the audit log names who paused from it).
func (s *Service) SetPaused(ctx context.Context, rec *core.Record, on bool) (*core.Record, error) {
	var out *core.Record
	err := s.app.RunInTransaction(func(tx core.App) error {
		fresh, err := tx.FindRecordById(DeploymentsCollection, rec.Id)
		if err != nil {
			return ErrNotFound
		}
		if err := refuseTakenDown(fresh); err != nil {
			return err
		}
		dep := DeploymentOf(fresh)
		out = fresh
		if dep.Paused() == on {
			return nil
		}
		dep.SetPaused(on)
		if err := tx.SaveWithContext(context.WithoutCancel(ctx), fresh); err != nil { // see Create
			return fmt.Errorf("save the pause of %s: %w", rec.Id, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
