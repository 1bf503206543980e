package forms

import (
	"fmt"
	"time"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
)

var _ core.RecordProxy = (*Deployment)(nil)

// Deployment is a deployments record as forms sees it: sites' typed
// Deployment (the site its visitors' forms post to, and its owner's
// e-mail notification settings), whose accessors hold the field names.
type Deployment struct {
	sites.Deployment
}

// DeploymentOf is rec, a deployments record, seen by forms.
func DeploymentOf(rec *core.Record) *Deployment {
	d := &Deployment{}
	d.SetProxyRecord(rec)
	return d
}

// Accepting reports whether the deployment's forms take submissions at
// now: it is active and not expired.
func (d *Deployment) Accepting(now time.Time) bool {
	return d.Status() == sites.StatusActive && !d.Expired(now)
}

// Ref is the deployment as webhooks name it, with siteURL its live URL.
func (d *Deployment) Ref(siteURL string) DeploymentRef {
	return DeploymentRef{ID: d.Id, Slug: d.Slug(), URL: siteURL}
}

// FindAcceptingDeployment returns the deployment id if its forms take
// submissions now (Accepting), else an error that is sites.ErrNotFound,
// sites.ErrTakenDown while an administrator has taken it down,
// sites.ErrPaused while its owner has paused it, or sites.ErrAwaitingClaim
// while it is held unserved until claimed (a form that nobody may see
// collects nothing: a kit hosted elsewhere cannot post to it).
func FindAcceptingDeployment(app core.App, id string) (*Deployment, error) {
	dep, err := sites.FindDeployment(app, id)
	if err != nil {
		return nil, err
	}
	d := &Deployment{Deployment: *dep}
	if !d.Accepting(time.Now()) {
		return nil, fmt.Errorf("deployment %q takes no submissions: %w", id, sites.ErrNotFound)
	}
	if d.TakenDown() {
		return nil, fmt.Errorf("deployment %q takes no submissions: %w", id, sites.ErrTakenDown)
	}
	if d.Paused() {
		return nil, fmt.Errorf("deployment %q takes no submissions: %w", id, sites.ErrPaused)
	}
	if d.AwaitingClaim() {
		return nil, fmt.Errorf("deployment %q takes no submissions: %w", id, sites.ErrAwaitingClaim)
	}
	return d, nil
}

// SetNotifyEmail turns the deployment's notification mails on or off and
// saves it; when turned on, only submissions from now on are mailed.
func SetNotifyEmail(app core.App, d *Deployment, on bool) error {
	if on && !d.NotifyEmail() {
		d.SetNotifiedUntil(notifyFrom())
	}
	d.SetNotifyEmail(on)
	if err := app.Save(d); err != nil {
		return fmt.Errorf("save the notification setting of %s: %w", d.Id, err)
	}
	return nil
}

// notifyFrom is the notified_until of a deployment whose notifications are
// turned on now: submissions from this millisecond on are mailed (a
// submission in the same millisecond as the switch is not lost).
func notifyFrom() time.Time { return time.Now().UTC().Add(-time.Millisecond) }

// markMailed writes only the given pacing fields of a deployment: a
// whole-record save could undo a deploy or a setting made while the mail
// was sent.
func markMailed(app core.App, id string, cols dbx.Params) error {
	_, err := app.NonconcurrentDB().Update(sites.DeploymentsCollection, cols, dbx.HashExp{"id": id}).Execute()
	if err != nil {
		return fmt.Errorf("record notification mail of %s: %w", id, err)
	}
	return nil
}
