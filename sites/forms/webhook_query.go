package forms

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pocketbase/dbx"
	validation "github.com/pocketbase/ozzo-validation/v4"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/security"

	"sitedrop/sites"
)

// MaxWebhooksPerDeployment bounds the webhooks of one deployment.
const MaxWebhooksPerDeployment = 10

// Errors of finding a deployment's webhooks and deliveries.
var (
	// ErrWebhookNotFound: no such webhook of that deployment.
	ErrWebhookNotFound = errors.New("webhook not found")
	// ErrDeliveryNotFound: no such delivery of that webhook.
	ErrDeliveryNotFound = errors.New("delivery not found")
)

// WebhookError is a webhook that CreateWebhook refuses; Msg says why, for
// the user.
type WebhookError struct {
	Msg string
}

// Error returns the message.
func (e *WebhookError) Error() string { return e.Msg }

// CreateWebhook validates a new webhook of the deployment deploymentID
// (url required and public, typ generic or slack, events known and not
// empty; nil events subscribes to all) and saves it, active, with a new
// signing secret, which it returns. A deployment has at most
// MaxWebhooksPerDeployment. Refusals are *WebhookError; a cancelled ctx
// is returned as is. ctx is the caller's request (the audit log names who
// created the webhook from it).
func CreateWebhook(ctx context.Context, app core.App, guard WebhookGuard, deploymentID, rawURL, typ string,
	evs *[]string) (*Webhook, string, error) {
	url := strings.TrimSpace(rawURL)
	if url == "" {
		return nil, "", &WebhookError{"url is required"}
	}
	if typ != WebhookGeneric && typ != WebhookSlack {
		return nil, "", &WebhookError{`type must be "generic" or "slack"`}
	}
	events := WebhookEvents
	if evs != nil {
		if len(*evs) == 0 {
			return nil, "", &WebhookError{"events must name at least one event"}
		}
		for _, ev := range *evs {
			if !slices.Contains(WebhookEvents, ev) {
				return nil, "", &WebhookError{fmt.Sprintf("unknown event %q (use %s)", ev, strings.Join(WebhookEvents, ", "))}
			}
		}
		events = slices.Compact(slices.Sorted(slices.Values(*evs)))
	}
	if err := guard.CheckURL(ctx, url); err != nil {
		var ue *WebhookURLError
		if errors.As(err, &ue) {
			return nil, "", &WebhookError{ue.Msg}
		}
		return nil, "", err
	}
	hook, err := NewWebhook(app)
	if err != nil {
		return nil, "", err
	}
	secret := "whsec_" + security.RandomString(32)
	hook.SetDeploymentID(deploymentID)
	hook.SetURL(url)
	hook.SetType(typ)
	hook.SetEvents(events)
	hook.SetSecret(secret)
	hook.SetActive(true)
	err = app.RunInTransaction(func(tx core.App) error {
		n, err := tx.CountRecords(WebhooksCollection, dbx.HashExp{webhookDeployment: deploymentID})
		if err != nil {
			return fmt.Errorf("count webhooks of %s: %w", deploymentID, err)
		}
		if n >= MaxWebhooksPerDeployment {
			return &WebhookError{fmt.Sprintf("A deployment has at most %d webhooks", MaxWebhooksPerDeployment)}
		}
		if err := tx.SaveWithContext(context.WithoutCancel(ctx), hook); err != nil {
			var verrs validation.Errors
			if errors.As(err, &verrs) {
				return &WebhookError{"webhook URL is not a valid URL"}
			}
			return fmt.Errorf("save webhook of %s: %w", deploymentID, err)
		}
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	return hook, secret, nil
}

// FindWebhooks returns the webhooks of the deployment, oldest first.
func FindWebhooks(app core.App, deploymentID string) ([]*Webhook, error) {
	var out []*Webhook
	err := app.RecordQuery(WebhooksCollection).AndWhere(dbx.HashExp{webhookDeployment: deploymentID}).
		OrderBy(webhookCreated + " ASC").All(&out)
	if err != nil {
		return nil, fmt.Errorf("find webhooks of %s: %w", deploymentID, err)
	}
	return out, nil
}

// FindWebhook returns the webhook id of the deployment deploymentID; any
// other (or a failed read) is ErrWebhookNotFound.
func FindWebhook(app core.App, deploymentID, id string) (*Webhook, error) {
	w := &Webhook{}
	err := app.RecordQuery(WebhooksCollection).AndWhere(dbx.HashExp{"id": id}).Limit(1).One(w)
	if err != nil {
		return nil, fmt.Errorf("webhook %q: %w", id, errors.Join(ErrWebhookNotFound, err))
	}
	if w.DeploymentID() != deploymentID {
		return nil, fmt.Errorf("webhook %q of deployment %q: %w", id, deploymentID, ErrWebhookNotFound)
	}
	return w, nil
}

// DeleteWebhook deletes a webhook and drops its pending deliveries; past
// ones stay as history. ctx is the caller's request (the audit log names
// who deleted the webhook from it).
func DeleteWebhook(ctx context.Context, app core.App, hook *Webhook) error {
	return app.RunInTransaction(func(tx core.App) error {
		if _, err := tx.NonconcurrentDB().Delete(DeliveriesCollection,
			dbx.HashExp{deliveryWebhook: hook.Id, deliveryStatus: DeliveryPending}).Execute(); err != nil {
			return fmt.Errorf("drop pending deliveries of webhook %s: %w", hook.Id, err)
		}
		if err := tx.DeleteWithContext(context.WithoutCancel(ctx), hook); err != nil {
			return fmt.Errorf("delete webhook %s: %w", hook.Id, err)
		}
		return nil
	})
}

// droppedReason is the last_error of a delivery dropped by capBacklog.
const droppedReason = "dropped: the receiver's backlog is full"

// capBacklog marks failed, with droppedReason, the oldest pending
// deliveries of the webhook hookID past the newest MaxPendingDeliveries.
// app may be a transaction.
func capBacklog(app core.App, hookID string) error {
	_, err := app.DB().NewQuery("UPDATE {{" + DeliveriesCollection + "}} SET [[" + deliveryStatus + "]] = {:failed}, " +
		"[[" + deliveryLastError + "]] = {:reason}, [[" + deliveryUpdated + "]] = {:now} WHERE [[id]] IN (SELECT [[id]] FROM {{" +
		DeliveriesCollection + "}} WHERE [[" + deliveryWebhook + "]] = {:hook} AND [[" + deliveryStatus + "]] = {:pending} " +
		"ORDER BY [[" + deliveryCreated + "]] DESC, [[id]] DESC LIMIT -1 OFFSET {:keep})").Bind(dbx.Params{
		"failed": DeliveryFailed, "reason": droppedReason, "now": sites.DBTime(time.Now()),
		"hook": hookID, "pending": DeliveryPending, "keep": MaxPendingDeliveries,
	}).Execute()
	if err != nil {
		return fmt.Errorf("drop the oldest pending deliveries of webhook %s: %w", hookID, err)
	}
	return nil
}

// FindDelivery returns the delivery id of the webhook hook; any other (or
// a failed read) is ErrDeliveryNotFound.
func FindDelivery(app core.App, hook *Webhook, id string) (*Delivery, error) {
	d, err := findDelivery(app, id)
	if err != nil {
		return nil, fmt.Errorf("delivery %q: %w", id, errors.Join(ErrDeliveryNotFound, err))
	}
	if d.WebhookID() != hook.Id || d.DeploymentID() != hook.DeploymentID() {
		return nil, fmt.Errorf("delivery %q of webhook %q: %w", id, hook.Id, ErrDeliveryNotFound)
	}
	return d, nil
}

// findDelivery reads the delivery id; sql.ErrNoRows when there is none.
func findDelivery(app core.App, id string) (*Delivery, error) {
	d := &Delivery{}
	if err := app.RecordQuery(DeliveriesCollection).AndWhere(dbx.HashExp{"id": id}).Limit(1).One(d); err != nil {
		return nil, err
	}
	return d, nil
}
