package hooks

import (
	"errors"
	"net/http"
	"slices"
	"strings"

	"sitedrop/sites/forms"

	"github.com/pocketbase/dbx"
	validation "github.com/pocketbase/ozzo-validation/v4"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/security"
)

// maxWebhooksPerDeployment bounds the webhooks of one deployment.
const maxWebhooksPerDeployment = 10

// webhookSendsPerMinute bounds the deliveries an account queues by hand
// ("Send a test" and "Redeliver" together) in a minute: each one takes
// the account's webhook sender for up to the delivery timeout.
const webhookSendsPerMinute = 10

// bindWebhooksAPI registers the webhook endpoints and e-mail notification
// settings of deployments.
func bindWebhooksAPI(sd *sitedrop, se *core.ServeEvent) {
	r := se.Router
	r.POST("/webhooks/{deployId}", sd.webhookCreate)
	r.GET("/webhooks/{deployId}", sd.webhooksList)
	r.DELETE("/webhooks/{deployId}/{webhookId}", sd.webhookDelete)
	r.PUT("/notifications/{deployId}", sd.notificationsUpdate)
	r.GET("/notifications/{deployId}", sd.notificationsView)
	r.Any("/webhooks/{deployId}", methodNotAllowed("GET, POST"))
	r.Any("/webhooks/{deployId}/{webhookId}", methodNotAllowed("DELETE"))
	r.Any("/notifications/{deployId}", methodNotAllowed("GET, PUT"))
}

// webhookCreate is POST /webhooks/{deployId} {url, type?, events?}. The
// answer carries the signing secret, shown once.
func (sd *sitedrop) webhookCreate(e *core.RequestEvent) error {
	dep, err := sd.ownedByPathValue(e, "deployId")
	if err != nil {
		return err
	}
	var body struct {
		URL    *string   `json:"url"`
		Type   *string   `json:"type"`
		Events *[]string `json:"events"`
	}
	if err := sd.readJSON(e, authBodyLimit, &body); err != nil {
		return err
	}
	if body.URL == nil {
		return fail(http.StatusBadRequest, "url is required")
	}
	typ := forms.WebhookGeneric
	if body.Type != nil {
		typ = *body.Type
	}
	hook, secret, err := sd.createWebhook(e, dep, *body.URL, typ, body.Events)
	if err != nil {
		return err
	}
	url, events := hook.GetString("url"), hook.GetStringSlice("events")
	return e.JSON(http.StatusOK, map[string]any{
		"id": hook.Id, "deployment_id": dep.Id, "url": url, "type": typ, "events": events, "secret": secret,
	})
}

// createWebhook validates a new webhook of dep as the API does (url
// required and public, type generic or slack, events known and not empty;
// nil events subscribes to all) and saves it with a new signing secret,
// which it returns. Refusals are *apiError with the API's messages.
func (sd *sitedrop) createWebhook(e *core.RequestEvent, dep *core.Record, rawURL, typ string, evs *[]string) (*core.Record, string, error) {
	url := strings.TrimSpace(rawURL)
	if url == "" {
		return nil, "", fail(http.StatusBadRequest, "url is required")
	}
	if typ != forms.WebhookGeneric && typ != forms.WebhookSlack {
		return nil, "", fail(http.StatusBadRequest, `type must be "generic" or "slack"`)
	}
	events := forms.WebhookEvents
	if evs != nil {
		if len(*evs) == 0 {
			return nil, "", fail(http.StatusBadRequest, "events must name at least one event")
		}
		for _, ev := range *evs {
			if !slices.Contains(forms.WebhookEvents, ev) {
				return nil, "", fail(http.StatusBadRequest, "unknown event %q (use %s)", ev, strings.Join(forms.WebhookEvents, ", "))
			}
		}
		events = slices.Compact(slices.Sorted(slices.Values(*evs)))
	}
	if err := sd.webhookGuard().CheckURL(e.Request.Context(), url); err != nil {
		var ue *forms.WebhookURLError
		if errors.As(err, &ue) {
			return nil, "", fail(http.StatusBadRequest, ue.Msg)
		}
		return nil, "", err
	}
	col, err := e.App.FindCachedCollectionByNameOrId(forms.WebhooksCollection)
	if err != nil {
		return nil, "", err
	}
	secret := "whsec_" + security.RandomString(32)
	hook := core.NewRecord(col)
	hook.Set("deployment", dep.Id)
	hook.Set("url", url)
	hook.Set("type", typ)
	hook.Set("events", events)
	hook.Set("secret", secret)
	hook.Set("active", true)
	err = e.App.RunInTransaction(func(tx core.App) error {
		n, err := tx.CountRecords(forms.WebhooksCollection, dbx.HashExp{"deployment": dep.Id})
		if err != nil {
			return err
		}
		if n >= maxWebhooksPerDeployment {
			return fail(http.StatusBadRequest, "A deployment has at most %d webhooks", maxWebhooksPerDeployment)
		}
		if err := tx.Save(hook); err != nil {
			var verrs validation.Errors
			if errors.As(err, &verrs) {
				return fail(http.StatusBadRequest, "webhook URL is not a valid URL")
			}
			return err
		}
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	return hook, secret, nil
}

// webhooksList is GET /webhooks/{deployId}.
func (sd *sitedrop) webhooksList(e *core.RequestEvent) error {
	dep, err := sd.ownedByPathValue(e, "deployId")
	if err != nil {
		return err
	}
	recs, err := e.App.FindRecordsByFilter(forms.WebhooksCollection, "deployment = {:d}", "created", 0, 0, dbx.Params{"d": dep.Id})
	if err != nil {
		return err
	}
	out := make([]map[string]any, 0, len(recs))
	for _, h := range recs {
		out = append(out, map[string]any{
			"id": h.Id, "url": h.GetString("url"), "type": h.GetString("type"),
			"events": h.GetStringSlice("events"), "active": h.GetBool("active"),
			"created_at": timestamp(h.GetDateTime("created").Time()),
		})
	}
	return e.JSON(http.StatusOK, map[string]any{"webhooks": out})
}

// webhookDelete is DELETE /webhooks/{deployId}/{webhookId}. Its pending
// deliveries are dropped with it.
func (sd *sitedrop) webhookDelete(e *core.RequestEvent) error {
	dep, err := sd.ownedByPathValue(e, "deployId")
	if err != nil {
		return err
	}
	hook, err := e.App.FindRecordById(forms.WebhooksCollection, e.Request.PathValue("webhookId"))
	if err != nil || hook.GetString("deployment") != dep.Id {
		return fail(http.StatusNotFound, "Webhook not found")
	}
	if err := sd.deleteWebhook(e.App, hook); err != nil {
		return err
	}
	return e.JSON(http.StatusOK, map[string]string{"id": hook.Id, "message": "Webhook deleted"})
}

// deleteWebhook deletes a webhook and drops its pending deliveries; past
// ones stay as history.
func (sd *sitedrop) deleteWebhook(app core.App, hook *core.Record) error {
	return app.RunInTransaction(func(tx core.App) error {
		if _, err := tx.NonconcurrentDB().Delete(forms.DeliveriesCollection,
			dbx.HashExp{"webhook": hook.Id, "status": forms.DeliveryPending}).Execute(); err != nil {
			return err
		}
		return tx.Delete(hook)
	})
}

// notificationsUpdate is PUT /notifications/{deployId} {"email": bool}:
// mail the owner about new submissions (at most one mail a minute).
func (sd *sitedrop) notificationsUpdate(e *core.RequestEvent) error {
	dep, err := sd.ownedByPathValue(e, "deployId")
	if err != nil {
		return err
	}
	var body struct {
		Email *bool `json:"email"`
	}
	if err := sd.readJSON(e, authBodyLimit, &body); err != nil {
		return err
	}
	if body.Email == nil {
		return fail(http.StatusBadRequest, "email is required (true or false)")
	}
	if err := setNotifyEmail(e.App, dep, *body.Email); err != nil {
		return err
	}
	return e.JSON(http.StatusOK, map[string]bool{"email": *body.Email})
}

// notificationsView is GET /notifications/{deployId}.
func (sd *sitedrop) notificationsView(e *core.RequestEvent) error {
	dep, err := sd.ownedByPathValue(e, "deployId")
	if err != nil {
		return err
	}
	return e.JSON(http.StatusOK, map[string]bool{"email": dep.GetBool("notify_email")})
}

// webhookGuard is the SSRF guard of webhook URLs.
func (sd *sitedrop) webhookGuard() forms.WebhookGuard {
	return forms.WebhookGuard{AllowPrivate: sd.cfg.WebhooksAllowPrivate}
}
