package hooks

import (
	"net/http"

	"sitedrop/sites/forms"

	"github.com/pocketbase/pocketbase/core"
)

// webhookSendsPerMinute bounds the deliveries an account queues by hand
// ("Send a test" and "Redeliver" together) in a minute: each one takes
// the account's webhook sender for up to the delivery timeout.
const webhookSendsPerMinute = 10

// bindWebhooksAPI registers the webhook endpoints and e-mail notification
// settings of deployments.
func bindWebhooksAPI(sd *sitedrop, se *core.ServeEvent, auth *apiAuth) {
	r := se.Router
	r.POST("/webhooks/{deployId}", sd.webhookCreate).Bind(auth.requireOwner("deployId"))
	r.GET("/webhooks/{deployId}", sd.webhooksList).Bind(auth.requireOwner("deployId"))
	r.DELETE("/webhooks/{deployId}/{webhookId}", sd.webhookDelete).Bind(auth.requireOwner("deployId"))
	r.PUT("/notifications/{deployId}", sd.notificationsUpdate).Bind(auth.requireOwner("deployId"))
	r.GET("/notifications/{deployId}", sd.notificationsView).Bind(auth.requireOwner("deployId"))
	r.Any("/webhooks/{deployId}", methodNotAllowed("GET, POST"))
	r.Any("/webhooks/{deployId}/{webhookId}", methodNotAllowed("DELETE"))
	r.Any("/notifications/{deployId}", methodNotAllowed("GET, PUT"))
}

// webhookCreate is POST /webhooks/{deployId} {url, type?, events?}. The
// answer carries the signing secret, shown once.
func (sd *sitedrop) webhookCreate(e *core.RequestEvent) error {
	dep := ownedOf(e)
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
	hook, secret, err := forms.CreateWebhook(e.Request.Context(), e.App, sd.webhookGuard(), dep.Id, *body.URL, typ, body.Events)
	if err != nil {
		return err // *forms.WebhookError: 400
	}
	return e.JSON(http.StatusOK, map[string]any{
		"id": hook.Id, "deployment_id": dep.Id, "url": hook.URL(), "type": typ, "events": hook.Events(), "secret": secret,
	})
}

// webhooksList is GET /webhooks/{deployId}.
func (sd *sitedrop) webhooksList(e *core.RequestEvent) error {
	dep := ownedOf(e)
	hooks, err := forms.FindWebhooks(e.App, dep.Id)
	if err != nil {
		return err
	}
	out := make([]map[string]any, 0, len(hooks))
	for _, h := range hooks {
		out = append(out, map[string]any{
			"id": h.Id, "url": h.URL(), "type": h.Type(), "events": h.Events(), "active": h.Active(),
			"created_at": timestamp(h.Created()),
		})
	}
	return e.JSON(http.StatusOK, map[string]any{"webhooks": out})
}

// webhookDelete is DELETE /webhooks/{deployId}/{webhookId}. Its pending
// deliveries are dropped with it.
func (sd *sitedrop) webhookDelete(e *core.RequestEvent) error {
	dep := ownedOf(e)
	hook, err := forms.FindWebhook(e.App, dep.Id, e.Request.PathValue("webhookId"))
	if err != nil {
		return err // forms.ErrWebhookNotFound: 404
	}
	if err := forms.DeleteWebhook(e.App, hook); err != nil {
		return err
	}
	return e.JSON(http.StatusOK, map[string]string{"id": hook.Id, "message": "Webhook deleted"})
}

// notificationsUpdate is PUT /notifications/{deployId} {"email": bool}:
// mail the owner about new submissions (at most one mail a minute).
func (sd *sitedrop) notificationsUpdate(e *core.RequestEvent) error {
	dep := ownedOf(e)
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
	dep := ownedOf(e)
	return e.JSON(http.StatusOK, map[string]bool{"email": forms.DeploymentOf(dep).NotifyEmail()})
}

// webhookGuard is the SSRF guard of webhook URLs.
func (sd *sitedrop) webhookGuard() forms.WebhookGuard {
	return forms.WebhookGuard{AllowPrivate: sd.cfg.WebhooksAllowPrivate}
}
