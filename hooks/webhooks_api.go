package hooks

import (
	"net/http"

	"sitedrop/hooks/internal/apierr"
	"sitedrop/sites/forms"
	"sitedrop/sites/intake"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/router"
)

// webhookSendsPerMinute bounds the deliveries an account queues by hand
// ("Send a test" and "Redeliver" together) in a minute: each one takes
// the account's webhook sender for up to the delivery timeout.
const webhookSendsPerMinute = 10

// webhooksAPI serves the webhook endpoints and the e-mail notification
// settings with exactly the services they use.
type webhooksAPI struct {
	// guard checks the webhooks' URLs (--webhooks-allow-private).
	guard forms.WebhookGuard
	// guards read the bodies within the memory budget and at a minimum rate.
	guards *intake.Guards
}

// bindWebhooksAPI registers the webhook endpoints and e-mail notification
// settings of deployments.
func bindWebhooksAPI(r *router.Router[*core.RequestEvent], api *webhooksAPI, auth *apiAuth) {
	r.POST("/webhooks/{deployId}", api.createWebhook).Bind(auth.requireOwner("deployId"))
	r.GET("/webhooks/{deployId}", api.listWebhooks).Bind(auth.requireOwner("deployId"))
	r.DELETE("/webhooks/{deployId}/{webhookId}", api.deleteWebhook).Bind(auth.requireOwner("deployId"))
	r.PUT("/notifications/{deployId}", api.updateNotifications).Bind(auth.requireOwner("deployId"))
	r.GET("/notifications/{deployId}", api.viewNotifications).Bind(auth.requireOwner("deployId"))
	r.Any("/webhooks/{deployId}", methodNotAllowed("GET, POST"))
	r.Any("/webhooks/{deployId}/{webhookId}", methodNotAllowed("DELETE"))
	r.Any("/notifications/{deployId}", methodNotAllowed("GET, PUT"))
}

// createWebhook is POST /webhooks/{deployId} {url, type?, events?}. The
// answer carries the signing secret, shown once.
func (api *webhooksAPI) createWebhook(e *core.RequestEvent) error {
	dep := ownedOf(e)
	var body struct {
		URL    string    `json:"url"` // absent: forms refuses it (url is required)
		Type   *string   `json:"type"`
		Events *[]string `json:"events"`
	}
	if err := api.guards.ReadJSON(e.Response, e.Request, authBodyLimit, &body); err != nil {
		return err
	}
	typ := forms.WebhookGeneric
	if body.Type != nil {
		typ = *body.Type
	}
	hook, secret, err := forms.CreateWebhook(e.Request.Context(), e.App, api.guard, dep.Id, body.URL, typ, body.Events)
	if err != nil {
		return err // *forms.WebhookError: 400
	}
	return e.JSON(http.StatusOK, map[string]any{
		"id": hook.Id, "deployment_id": dep.Id, "url": hook.URL(), "type": typ, "events": hook.Events(), "secret": secret,
	})
}

// listWebhooks is GET /webhooks/{deployId}.
func (api *webhooksAPI) listWebhooks(e *core.RequestEvent) error {
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

// deleteWebhook is DELETE /webhooks/{deployId}/{webhookId}. Its pending
// deliveries are dropped with it.
func (api *webhooksAPI) deleteWebhook(e *core.RequestEvent) error {
	dep := ownedOf(e)
	hook, err := forms.FindWebhook(e.App, dep.Id, e.Request.PathValue("webhookId"))
	if err != nil {
		return err // forms.ErrWebhookNotFound: 404
	}
	if err := forms.DeleteWebhook(e.Request.Context(), e.App, hook); err != nil {
		return err
	}
	return e.JSON(http.StatusOK, map[string]string{"id": hook.Id, "message": "Webhook deleted"})
}

// updateNotifications is PUT /notifications/{deployId} {"email": bool}:
// mail the owner about new submissions (at most one mail a minute).
func (api *webhooksAPI) updateNotifications(e *core.RequestEvent) error {
	dep := ownedOf(e)
	var body struct {
		Email *bool `json:"email"`
	}
	if err := api.guards.ReadJSON(e.Response, e.Request, authBodyLimit, &body); err != nil {
		return err
	}
	if body.Email == nil {
		return apierr.Fail(http.StatusBadRequest, "email is required (true or false)")
	}
	if err := setNotifyEmail(e.App, dep, *body.Email); err != nil {
		return err
	}
	return e.JSON(http.StatusOK, map[string]bool{"email": *body.Email})
}

// viewNotifications is GET /notifications/{deployId}.
func (api *webhooksAPI) viewNotifications(e *core.RequestEvent) error {
	dep := ownedOf(e)
	return e.JSON(http.StatusOK, map[string]bool{"email": forms.DeploymentOf(dep).NotifyEmail()})
}

// webhookGuard is the SSRF guard of webhook URLs.
func (c *Config) webhookGuard() forms.WebhookGuard {
	return forms.WebhookGuard{AllowPrivate: c.WebhooksAllowPrivate}
}
