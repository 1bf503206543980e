package forms

import (
	"errors"
	"fmt"
	"time"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
)

// What the dashboard does with one webhook: send it a test, show its
// latest deliveries, and send one of them again.

// EventTest is the event of a test delivery queued from the dashboard. It
// is not in WebhookEvents: nobody subscribes to it, every webhook gets it
// when its owner asks. Receivers that switch on the event can ignore it;
// its generic body is {event, deployment, sent_at}.
const EventTest = "test"

// Errors of the dashboard's delivery actions.
var (
	// ErrDeliveryPending: the delivery is still queued; it needs no resend.
	ErrDeliveryPending = errors.New("that delivery is still queued")
	// ErrWebhookGone: the delivery's webhook was deleted.
	ErrWebhookGone = errors.New("the webhook of that delivery was deleted")
)

// QueueTest queues a test delivery to hook, due now, whatever events it
// subscribes to, and returns it. Like every delivery queued, it may drop
// the webhook's oldest pending one (see MaxPendingDeliveries).
func QueueTest(app core.App, hook *Webhook, dep DeploymentRef) (*Delivery, error) {
	typ := hook.PayloadType()
	payload, err := webhookPayload(typ, EventTest, dep, nil)
	if err != nil {
		return nil, err
	}
	depID := hook.DeploymentID()
	account, err := deploymentAccount(app, depID)
	if err != nil {
		return nil, err
	}
	d, err := newDelivery(app, hook, depID, account, EventTest, typ, payload, time.Now().UTC())
	if err != nil {
		return nil, err
	}
	d.SetManual(true)
	if err := app.RunInTransaction(func(tx core.App) error {
		if err := tx.Save(d); err != nil {
			return fmt.Errorf("queue test delivery for webhook %s: %w", hook.Id, err)
		}
		return capBacklog(tx, hook.Id)
	}); err != nil {
		return nil, err
	}
	return d, nil
}

// Redeliver queues a copy of a finished delivery (same event, target and
// body, a new id), due now, and returns it. A pending one is refused with
// ErrDeliveryPending, one whose webhook is gone with ErrWebhookGone. It
// may drop the webhook's oldest pending delivery (see
// MaxPendingDeliveries).
func Redeliver(app core.App, orig *Delivery) (*Delivery, error) {
	if orig.Status() == DeliveryPending {
		return nil, ErrDeliveryPending
	}
	hookID := orig.WebhookID()
	if hookID == "" {
		return nil, ErrWebhookGone
	}
	if _, err := app.FindRecordById(WebhooksCollection, hookID); err != nil {
		return nil, ErrWebhookGone
	}
	d := DeliveryOf(core.NewRecord(orig.Collection()))
	d.SetDeploymentID(orig.DeploymentID())
	d.SetAccount(orig.Account())
	d.SetWebhookID(hookID)
	d.SetEvent(orig.Event())
	d.SetURL(orig.URL())
	d.SetType(orig.Type())
	d.SetSecret(orig.Secret())
	d.SetPayload(orig.Payload())
	if d.Account() == "" && d.DeploymentID() != "" { // queued before deliveries had accounts
		account, err := deploymentAccount(app, d.DeploymentID())
		if err != nil {
			return nil, err
		}
		d.SetAccount(account)
	}
	d.SetStatus(DeliveryPending)
	d.SetAttempts(0)
	d.SetManual(true)
	d.SetNextAttemptAt(time.Now().UTC())
	if err := app.RunInTransaction(func(tx core.App) error {
		if err := tx.Save(d); err != nil {
			return fmt.Errorf("queue copy of delivery %s: %w", orig.Id, err)
		}
		return capBacklog(tx, hookID)
	}); err != nil {
		return nil, err
	}
	return d, nil
}

// newDelivery makes (unsaved) a pending delivery of payload to hook's
// target for account, due at now; deploymentID may be empty (a
// deployment.deleted delivery outlives its deployment).
func newDelivery(app core.App, hook *Webhook, deploymentID, account, event, typ, payload string, now time.Time) (*Delivery, error) {
	d, err := NewDelivery(app)
	if err != nil {
		return nil, err
	}
	if deploymentID != "" {
		d.SetDeploymentID(deploymentID)
	}
	d.SetAccount(account)
	d.SetWebhookID(hook.Id)
	d.SetEvent(event)
	d.SetURL(hook.URL())
	d.SetType(typ)
	d.SetSecret(hook.Secret())
	d.SetPayload(payload)
	d.SetStatus(DeliveryPending)
	d.SetAttempts(0)
	d.SetNextAttemptAt(now)
	return d, nil
}

// deploymentAccount is the owner of deployment id, the account its
// deliveries are sent for ("" for an anonymous one).
func deploymentAccount(app core.App, id string) (string, error) {
	rec, err := app.FindRecordById(sites.DeploymentsCollection, id)
	if err != nil {
		return "", fmt.Errorf("find the owner of deployment %s: %w", id, err)
	}
	return DeploymentOf(rec).OwnerID(), nil
}

// RecentDeliveries returns the latest limit deliveries of a webhook,
// newest first.
func RecentDeliveries(app core.App, webhookID string, limit int) ([]*Delivery, error) {
	var out []*Delivery
	q := app.RecordQuery(DeliveriesCollection).AndWhere(dbx.HashExp{deliveryWebhook: webhookID}).
		OrderBy(deliveryCreated+" DESC", "id DESC")
	if limit > 0 {
		q.Limit(int64(limit))
	}
	if err := q.All(&out); err != nil {
		return nil, fmt.Errorf("find deliveries of webhook %s: %w", webhookID, err)
	}
	return out, nil
}
