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

// Delivery is one delivery as the dashboard lists it.
type Delivery struct {
	ID, Event, Status string
	Attempts          int
	// LastStatus is the HTTP status of the last answer, 0 without one.
	LastStatus int
	LastError  string
	// NextAttemptAt is when a pending delivery is tried next.
	NextAttemptAt time.Time
	Created       time.Time
}

// QueueTest queues a test delivery to hook, due now, whatever events it
// subscribes to, and returns it.
func QueueTest(app core.App, hook *core.Record, dep DeploymentRef) (*core.Record, error) {
	typ := hook.GetString("type")
	if typ != WebhookSlack {
		typ = WebhookGeneric
	}
	payload, err := webhookPayload(typ, EventTest, dep, nil)
	if err != nil {
		return nil, err
	}
	depID := hook.GetString("deployment")
	account, err := deploymentAccount(app, depID)
	if err != nil {
		return nil, err
	}
	rec, err := newDelivery(app, hook, depID, account, EventTest, typ, payload, time.Now().UTC())
	if err != nil {
		return nil, err
	}
	if err := app.Save(rec); err != nil {
		return nil, fmt.Errorf("queue test delivery for webhook %s: %w", hook.Id, err)
	}
	return rec, nil
}

// Redeliver queues a copy of a finished delivery (same event, target and
// body, a new id), due now, and returns it. A pending one is refused with
// ErrDeliveryPending, one whose webhook is gone with ErrWebhookGone.
func Redeliver(app core.App, orig *core.Record) (*core.Record, error) {
	if orig.GetString("status") == DeliveryPending {
		return nil, ErrDeliveryPending
	}
	hookID := orig.GetString("webhook")
	if hookID == "" {
		return nil, ErrWebhookGone
	}
	if _, err := app.FindRecordById(WebhooksCollection, hookID); err != nil {
		return nil, ErrWebhookGone
	}
	rec := core.NewRecord(orig.Collection())
	for _, f := range []string{"deployment", "account", "webhook", "event", "url", "type", "secret", "payload"} {
		rec.Set(f, orig.Get(f))
	}
	if rec.GetString("account") == "" && rec.GetString("deployment") != "" { // queued before deliveries had accounts
		account, err := deploymentAccount(app, rec.GetString("deployment"))
		if err != nil {
			return nil, err
		}
		rec.Set("account", account)
	}
	rec.Set("status", DeliveryPending)
	rec.Set("attempts", 0)
	rec.Set("next_attempt_at", time.Now().UTC())
	if err := app.Save(rec); err != nil {
		return nil, fmt.Errorf("queue copy of delivery %s: %w", orig.Id, err)
	}
	return rec, nil
}

// newDelivery makes (unsaved) a pending delivery of payload to hook's
// target for account, due at now; deploymentID may be empty (a
// deployment.deleted delivery outlives its deployment).
func newDelivery(app core.App, hook *core.Record, deploymentID, account, event, typ, payload string, now time.Time) (*core.Record, error) {
	col, err := app.FindCachedCollectionByNameOrId(DeliveriesCollection)
	if err != nil {
		return nil, fmt.Errorf("find %s collection: %w", DeliveriesCollection, err)
	}
	rec := core.NewRecord(col)
	if deploymentID != "" {
		rec.Set("deployment", deploymentID)
	}
	rec.Set("account", account)
	rec.Set("webhook", hook.Id)
	rec.Set("event", event)
	rec.Set("url", hook.GetString("url"))
	rec.Set("type", typ)
	rec.Set("secret", hook.GetString("secret"))
	rec.Set("payload", payload)
	rec.Set("status", DeliveryPending)
	rec.Set("attempts", 0)
	rec.Set("next_attempt_at", now)
	return rec, nil
}

// deploymentAccount is the owner of deployment id, the account its
// deliveries are sent for ("" for an anonymous one).
func deploymentAccount(app core.App, id string) (string, error) {
	dep, err := app.FindRecordById(sites.DeploymentsCollection, id)
	if err != nil {
		return "", fmt.Errorf("find the owner of deployment %s: %w", id, err)
	}
	return dep.GetString("owner"), nil
}

// RecentDeliveries returns the latest limit deliveries of a webhook,
// newest first.
func RecentDeliveries(app core.App, webhookID string, limit int) ([]Delivery, error) {
	recs, err := app.FindRecordsByFilter(DeliveriesCollection, "webhook = {:w}", "-created,-id", limit, 0,
		dbx.Params{"w": webhookID})
	if err != nil {
		return nil, fmt.Errorf("find deliveries of webhook %s: %w", webhookID, err)
	}
	out := make([]Delivery, 0, len(recs))
	for _, r := range recs {
		d := Delivery{
			ID: r.Id, Event: r.GetString("event"), Status: r.GetString("status"),
			Attempts: r.GetInt("attempts"), LastStatus: r.GetInt("last_status"), LastError: r.GetString("last_error"),
			Created: r.GetDateTime("created").Time(),
		}
		if d.Status == DeliveryPending {
			d.NextAttemptAt = r.GetDateTime("next_attempt_at").Time()
		}
		out = append(out, d)
	}
	return out, nil
}
