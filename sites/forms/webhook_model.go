package forms

import (
	"fmt"
	"time"

	"github.com/pocketbase/pocketbase/core"
)

// Fields of the webhooks collection.
const (
	webhookDeployment = "deployment"
	webhookURL        = "url"
	webhookType       = "type"
	webhookEvents     = "events"
	webhookSecret     = "secret"
	webhookActive     = "active"
	webhookCreated    = "created"
)

var _ core.RecordProxy = (*Webhook)(nil)

// Webhook is a record of the webhooks collection: where a deployment's
// events are posted, and the secret that signs them.
type Webhook struct {
	core.BaseRecordProxy
}

// NewWebhook returns a new, unsaved webhook.
func NewWebhook(app core.App) (*Webhook, error) {
	col, err := app.FindCachedCollectionByNameOrId(WebhooksCollection)
	if err != nil {
		return nil, fmt.Errorf("find %s collection: %w", WebhooksCollection, err)
	}
	return WebhookOf(core.NewRecord(col)), nil
}

// WebhookOf is rec, a webhooks record, as a Webhook.
func WebhookOf(rec *core.Record) *Webhook {
	w := &Webhook{}
	w.SetProxyRecord(rec)
	return w
}

// DeploymentID returns the "deployment" field.
func (w *Webhook) DeploymentID() string { return w.GetString(webhookDeployment) }

// SetDeploymentID sets the "deployment" field.
func (w *Webhook) SetDeploymentID(id string) { w.Set(webhookDeployment, id) }

// URL returns the "url" field: where deliveries are posted.
func (w *Webhook) URL() string { return w.GetString(webhookURL) }

// SetURL sets the "url" field.
func (w *Webhook) SetURL(url string) { w.Set(webhookURL, url) }

// Type returns the "type" field: WebhookGeneric or WebhookSlack.
func (w *Webhook) Type() string { return w.GetString(webhookType) }

// SetType sets the "type" field.
func (w *Webhook) SetType(typ string) { w.Set(webhookType, typ) }

// PayloadType is the payload the webhook gets: WebhookSlack, else
// WebhookGeneric.
func (w *Webhook) PayloadType() string {
	if w.Type() == WebhookSlack {
		return WebhookSlack
	}
	return WebhookGeneric
}

// Events returns the "events" field: the events it subscribes to.
func (w *Webhook) Events() []string { return w.GetStringSlice(webhookEvents) }

// SetEvents sets the "events" field.
func (w *Webhook) SetEvents(events []string) { w.Set(webhookEvents, events) }

// Secret returns the "secret" field: the key of SignWebhook.
func (w *Webhook) Secret() string { return w.GetString(webhookSecret) }

// SetSecret sets the "secret" field.
func (w *Webhook) SetSecret(secret string) { w.Set(webhookSecret, secret) }

// Active returns the "active" field: an inactive webhook gets nothing.
func (w *Webhook) Active() bool { return w.GetBool(webhookActive) }

// SetActive sets the "active" field.
func (w *Webhook) SetActive(on bool) { w.Set(webhookActive, on) }

// Created returns the "created" field.
func (w *Webhook) Created() time.Time { return w.GetDateTime(webhookCreated).Time() }
