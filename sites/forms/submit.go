package forms

import (
	"fmt"

	"github.com/pocketbase/pocketbase/core"
)

// Submit stores a form post to the deployment dep: data, with its keys
// stored in the order of order (see OrderedJSON), and, in the same
// transaction, a submission delivery for each webhook subscribed to it.
// The caller wakes the Deliverer and the notification mailer.
func Submit(app core.App, dep DeploymentRef, data map[string]any, order []string) (*Submission, error) {
	raw, err := OrderedJSON(data, order)
	if err != nil {
		return nil, fmt.Errorf("encode submission: %w", err)
	}
	sub, err := NewSubmission(app)
	if err != nil {
		return nil, err
	}
	err = app.RunInTransaction(func(tx core.App) error {
		sub.SetDeploymentID(dep.ID)
		sub.SetRawData(raw)
		if err := tx.Save(sub); err != nil {
			return fmt.Errorf("save submission to %s: %w", dep.ID, err)
		}
		_, err := EnqueueWebhooks(tx, dep.ID, EventSubmission, dep, sub.JSON())
		return err
	})
	if err != nil {
		return nil, err
	}
	return sub, nil
}
