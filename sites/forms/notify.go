package forms

import (
	"fmt"
	"time"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
	"sitedrop/sites/accounts"
)

// Notification mails: an owner who turned them on is mailed about the
// submissions not mailed yet, at most one mail a minute per deployment:
// the first submission is mailed at once, later ones within the minute
// are batched into the next mail. The mail itself is the caller's.

// Notification mail pacing and size.
const (
	// NotifyInterval is the least time between two mails of a deployment.
	NotifyInterval = time.Minute
	// NotifyMaxListed is how many submissions one mail shows.
	NotifyMaxListed = 20
	// NotifyMaxPerPass is how many deployments one pass mails.
	NotifyMaxPerPass = 200
)

// Notification is what one mail tells a deployment's owner.
type Notification struct {
	Deployment *Deployment
	// To is the owner's e-mail address.
	To string
	// Total is how many submissions are not mailed yet.
	Total int
	// Submissions are the newest of them, at most NotifyMaxListed,
	// newest first.
	Submissions []*Submission
}

// FindDueNotifications returns the ids of the deployments, at most
// NotifyMaxPerPass, whose owner is to be mailed at now: notifications on,
// an owner (anonymous deployments are skipped until claimed), submissions
// not mailed yet, and no mail in the last NotifyInterval; the longest
// waiting first.
func FindDueNotifications(app core.App, now time.Time) ([]string, error) {
	var rows []struct {
		ID string `db:"id"`
	}
	err := app.DB().NewQuery(`
		SELECT d.[[id]] FROM {{` + sites.DeploymentsCollection + `}} d
		WHERE d.[[` + sites.FieldNotifyEmail + `]] = TRUE AND d.[[` + sites.FieldOwner + `]] != ''
		  AND (d.[[` + sites.FieldLastMailAt + `]] = '' OR d.[[` + sites.FieldLastMailAt + `]] <= {:due})
		  AND EXISTS (SELECT 1 FROM {{` + SubmissionsCollection + `}} s WHERE s.[[` + submissionDeployment + `]] = d.[[id]]
		              AND s.[[` + submissionCreated + `]] > d.[[` + sites.FieldNotifiedUntil + `]])
		ORDER BY d.[[` + sites.FieldLastMailAt + `]]
		LIMIT {:max}`).
		Bind(dbx.Params{"due": sites.DBTime(now.Add(-NotifyInterval)), "max": NotifyMaxPerPass}).All(&rows)
	if err != nil {
		return nil, fmt.Errorf("find due notifications: %w", err)
	}
	ids := make([]string, 0, len(rows))
	for _, r := range rows {
		ids = append(ids, r.ID)
	}
	return ids, nil
}

// FindNotification returns the mail due to the owner of the deployment
// id, or nil when there is none to send (the deployment or its owner was
// deleted meanwhile, or nothing is new).
func FindNotification(app core.App, id string) (*Notification, error) {
	rec, err := app.FindRecordById(sites.DeploymentsCollection, id)
	if err != nil {
		return nil, nil // deleted meanwhile
	}
	dep := DeploymentOf(rec)
	owner, err := app.FindRecordById(accounts.UsersCollection, dep.OwnerID())
	if err != nil {
		return nil, nil
	}
	subs, total, err := findSubmissionsSince(app, dep.Id, sites.DBTime(dep.NotifiedUntil()), NotifyMaxListed)
	if err != nil || len(subs) == 0 {
		return nil, err
	}
	return &Notification{Deployment: dep, To: owner.Email(), Total: int(total), Submissions: subs}, nil
}

// MarkNotified records that n was mailed at now: its submissions are
// mailed, and the next mail waits NotifyInterval. A submission newer than
// the listed ones arrived meanwhile: the next mail takes it.
func MarkNotified(app core.App, n *Notification, now time.Time) error {
	return markMailed(app, n.Deployment.Id, dbx.Params{
		sites.FieldNotifiedUntil: sites.DBTime(n.Submissions[0].Created()),
		sites.FieldLastMailAt:    sites.DBTime(now),
	})
}

// MarkNotifyFailed records that the mail of deployment id failed at now:
// it is tried again after NotifyInterval, not on every pass.
func MarkNotifyFailed(app core.App, id string, now time.Time) error {
	return markMailed(app, id, dbx.Params{sites.FieldLastMailAt: sites.DBTime(now)})
}
