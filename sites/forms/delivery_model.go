package forms

import (
	"fmt"
	"time"

	"github.com/pocketbase/pocketbase/core"
)

// Fields of the webhook_deliveries collection.
const (
	deliveryDeployment    = "deployment"
	deliveryAccount       = "account"
	deliveryWebhook       = "webhook"
	deliveryEvent         = "event"
	deliveryURL           = "url"
	deliveryType          = "type"
	deliverySecret        = "secret"
	deliveryPayload       = "payload"
	deliveryStatus        = "status"
	deliveryAttempts      = "attempts"
	deliveryNextAttemptAt = "next_attempt_at"
	deliveryLastStatus    = "last_status"
	deliveryLastError     = "last_error"
	deliveryManual        = "manual"
	deliveryCreated       = "created"
	deliveryUpdated       = "updated"
)

var _ core.RecordProxy = (*Delivery)(nil)

// Delivery is a record of the webhook_deliveries collection: one event
// queued for one webhook, with a copy of its target (url, type, secret)
// and body as they were when it was queued, and how its attempts went.
type Delivery struct {
	core.BaseRecordProxy
}

// NewDelivery returns a new, unsaved delivery.
func NewDelivery(app core.App) (*Delivery, error) {
	col, err := app.FindCachedCollectionByNameOrId(DeliveriesCollection)
	if err != nil {
		return nil, fmt.Errorf("find %s collection: %w", DeliveriesCollection, err)
	}
	return DeliveryOf(core.NewRecord(col)), nil
}

// DeliveryOf is rec, a webhook_deliveries record, as a Delivery.
func DeliveryOf(rec *core.Record) *Delivery {
	d := &Delivery{}
	d.SetProxyRecord(rec)
	return d
}

// DeploymentID returns the "deployment" field; "" for a
// deployment.deleted delivery, which outlives its deployment.
func (d *Delivery) DeploymentID() string { return d.GetString(deliveryDeployment) }

// SetDeploymentID sets the "deployment" field.
func (d *Delivery) SetDeploymentID(id string) { d.Set(deliveryDeployment, id) }

// Account returns the "account" field: the account it is sent for (see
// Deliverer); "" for an anonymous deployment's.
func (d *Delivery) Account() string { return d.GetString(deliveryAccount) }

// SetAccount sets the "account" field.
func (d *Delivery) SetAccount(id string) { d.Set(deliveryAccount, id) }

// WebhookID returns the "webhook" field; "" once the webhook is deleted.
func (d *Delivery) WebhookID() string { return d.GetString(deliveryWebhook) }

// SetWebhookID sets the "webhook" field.
func (d *Delivery) SetWebhookID(id string) { d.Set(deliveryWebhook, id) }

// Event returns the "event" field.
func (d *Delivery) Event() string { return d.GetString(deliveryEvent) }

// SetEvent sets the "event" field.
func (d *Delivery) SetEvent(event string) { d.Set(deliveryEvent, event) }

// URL returns the "url" field: the target, as it was when queued.
func (d *Delivery) URL() string { return d.GetString(deliveryURL) }

// SetURL sets the "url" field.
func (d *Delivery) SetURL(url string) { d.Set(deliveryURL, url) }

// Type returns the "type" field: the payload's kind.
func (d *Delivery) Type() string { return d.GetString(deliveryType) }

// SetType sets the "type" field.
func (d *Delivery) SetType(typ string) { d.Set(deliveryType, typ) }

// Secret returns the "secret" field: the key it is signed with.
func (d *Delivery) Secret() string { return d.GetString(deliverySecret) }

// SetSecret sets the "secret" field.
func (d *Delivery) SetSecret(secret string) { d.Set(deliverySecret, secret) }

// Payload returns the "payload" field: the stored body (see
// webhookPayload).
func (d *Delivery) Payload() string { return d.GetString(deliveryPayload) }

// SetPayload sets the "payload" field.
func (d *Delivery) SetPayload(payload string) { d.Set(deliveryPayload, payload) }

// Status returns the "status" field: DeliveryPending, DeliveryDelivered
// or DeliveryFailed.
func (d *Delivery) Status() string { return d.GetString(deliveryStatus) }

// SetStatus sets the "status" field.
func (d *Delivery) SetStatus(status string) { d.Set(deliveryStatus, status) }

// Attempts returns the "attempts" field.
func (d *Delivery) Attempts() int { return d.GetInt(deliveryAttempts) }

// SetAttempts sets the "attempts" field.
func (d *Delivery) SetAttempts(n int) { d.Set(deliveryAttempts, n) }

// NextAttemptAt returns the "next_attempt_at" field: when a pending
// delivery is tried next (zero: at once).
func (d *Delivery) NextAttemptAt() time.Time { return d.GetDateTime(deliveryNextAttemptAt).Time() }

// SetNextAttemptAt sets the "next_attempt_at" field.
func (d *Delivery) SetNextAttemptAt(t time.Time) { d.Set(deliveryNextAttemptAt, t) }

// LastStatus returns the "last_status" field: the HTTP status of the last
// answer, 0 without one.
func (d *Delivery) LastStatus() int { return d.GetInt(deliveryLastStatus) }

// SetLastStatus sets the "last_status" field.
func (d *Delivery) SetLastStatus(status int) { d.Set(deliveryLastStatus, status) }

// LastError returns the "last_error" field: why the last attempt failed.
func (d *Delivery) LastError() string { return d.GetString(deliveryLastError) }

// SetLastError sets the "last_error" field.
func (d *Delivery) SetLastError(msg string) { d.Set(deliveryLastError, msg) }

// Manual returns the "manual" field: an owner asked for it (Send a test,
// Redeliver), so while its receiver is down its first attempt is the
// receiver's probe at once (see Deliverer).
func (d *Delivery) Manual() bool { return d.GetBool(deliveryManual) }

// SetManual sets the "manual" field.
func (d *Delivery) SetManual(on bool) { d.Set(deliveryManual, on) }

// Created returns the "created" field.
func (d *Delivery) Created() time.Time { return d.GetDateTime(deliveryCreated).Time() }

// NextAttempt is when a pending delivery is tried next; zero for a
// finished one.
func (d *Delivery) NextAttempt() time.Time {
	if d.Status() != DeliveryPending {
		return time.Time{}
	}
	return d.NextAttemptAt()
}
