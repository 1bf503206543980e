package pages

import (
	"errors"
	"net/http"
	"strings"

	"github.com/a-h/templ"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/hook"

	"sitedrop/hooks/internal/apierr"
	"sitedrop/sites/forms"
	"sitedrop/sites/ratelimit"
	"sitedrop/ui"
)

// webhookPages are the site page's webhook forms.
type webhookPages struct {
	*siteForms
	// guard is the SSRF guard of webhook URLs, as configured now.
	guard func() forms.WebhookGuard
	// sends limits the tests and redeliveries an account queues by hand.
	sends *ratelimit.Limiter
	// ref is what a delivery says of its deployment.
	ref func(dep *core.Record) forms.DeploymentRef
	// wake nudges the webhook sender.
	wake func()
}

// siteDeliveriesShown is how many deliveries the site page lists per
// webhook.
const siteDeliveriesShown = 5

// accountWebhooks is the site page's view of the webhooks hooks, each with
// its latest deliveries.
func accountWebhooks(app core.App, hooks []*forms.Webhook) ([]ui.AccountWebhook, error) {
	out := make([]ui.AccountWebhook, 0, len(hooks))
	for _, h := range hooks {
		log, err := forms.RecentDeliveries(app, h.Id, siteDeliveriesShown)
		if err != nil {
			return nil, err
		}
		w := accountWebhook(h)
		for _, d := range log {
			w.Deliveries = append(w.Deliveries, ui.WebhookDelivery{
				ID: d.Id, Event: d.Event(), Status: d.Status(), Attempts: d.Attempts(), LastStatus: d.LastStatus(),
				LastError: d.LastError(), NextAttemptAt: d.NextAttempt(), Created: d.Created(),
			})
		}
		out = append(out, w)
	}
	return out, nil
}

// accountWebhook is webhook h, without its deliveries, as the pages show it.
func accountWebhook(h *forms.Webhook) ui.AccountWebhook {
	return ui.AccountWebhook{ID: h.Id, URL: h.URL(), Type: h.Type(), Events: strings.Join(h.Events(), ", ")}
}

// requireSiteWebhook, after requirePageOwner, leaves the site's webhook
// named by the path value param on the event (webhookOf), and answers a
// 404 page for a webhook of another site.
func (wp *webhookPages) requireSiteWebhook(param string) *hook.Handler[*core.RequestEvent] {
	return middleware("sitedropRequireSiteWebhook", func(e *core.RequestEvent) error {
		w, err := forms.FindWebhook(e.App, ownedOf(e).Id, e.Request.PathValue(param))
		if errors.Is(err, forms.ErrWebhookNotFound) {
			return wp.sessions.errorPage(e, http.StatusNotFound, "Webhook not found", "There is no such webhook on this site.")
		} else if err != nil {
			return err
		}
		e.Set(siteWebhookKey, w)
		return e.Next()
	})
}

// siteWebhookKey is where requireSiteWebhook leaves the webhook.
const siteWebhookKey = "sitedropSiteWebhook"

// webhookOf is the webhook left on e by requireSiteWebhook.
func webhookOf(e *core.RequestEvent) *forms.Webhook {
	w, _ := e.Get(siteWebhookKey).(*forms.Webhook)
	return w
}

// accountWebhookCreate is the site page's "Add webhook" form: the API's
// rules (forms.CreateWebhook), and the signing secret shown once.
func (wp *webhookPages) accountWebhookCreate(e *core.RequestEvent) error {
	dep := ownedOf(e)
	f := e.Request.PostForm
	typ := f.Get("type")
	if typ == "" {
		typ = forms.WebhookGeneric
	}
	events := f["events"]
	if events == nil {
		events = []string{} // none ticked: refused, not "all"
	}
	hook, secret, err := forms.CreateWebhook(e.Request.Context(), e.App, wp.guard(), dep.Id, f.Get("url"), typ, &events)
	var we *forms.WebhookError
	if errors.As(err, &we) {
		return wp.backToSite(e, dep, ui.PanelWebhookAdd, ui.FlashError, "Webhook not added: "+apierr.Sentence(we.Msg))
	} else if err != nil {
		return err
	}
	row := ui.WebhookPanel(hook.Id)
	wp.sessions.flash(e, ui.Flash{Kind: ui.FlashSuccess, Panel: row.ID,
		Text:   "Webhook added. Its signing secret, shown only now, verifies the X-Sitedrop-Signature header:",
		Secret: secret})
	return e.Redirect(http.StatusSeeOther, ui.TabPath(dep.Id, row.Tab)+"#"+row.ID)
}

// accountWebhookTest is a webhook's "Send a test" button: a test delivery
// queued now, shown in the delivery log, within the account's
// limit (sends).
func (wp *webhookPages) accountWebhookTest(e *core.RequestEvent) error {
	dep, hook := ownedOf(e), webhookOf(e)
	if err := apierr.RateRefusal(e.Response, wp.sends.Check(forms.DeploymentOf(dep).OwnerID())); err != nil {
		return wp.refusedLater(e, dep, ui.WebhookPanel(hook.Id), "Test not sent: ", err)
	}
	if _, err := forms.QueueTest(e.App, hook, wp.ref(dep)); err != nil {
		return err
	}
	wp.wake()
	return wp.backToSite(e, dep, ui.WebhookPanel(hook.Id), ui.FlashSuccess, "Test delivery queued; its outcome shows under the webhook.")
}

// accountWebhookRedeliver is a delivery's "Redeliver" button: a copy of it
// queued now, within the account's limit (sends).
func (wp *webhookPages) accountWebhookRedeliver(e *core.RequestEvent) error {
	dep, hook := ownedOf(e), webhookOf(e)
	del, err := forms.FindDelivery(e.App, hook, e.Request.PathValue("deliveryId"))
	if errors.Is(err, forms.ErrDeliveryNotFound) {
		return wp.sessions.errorPage(e, http.StatusNotFound, "Delivery not found", "There is no such delivery of this webhook.")
	} else if err != nil {
		return err
	}
	owner := forms.DeploymentOf(dep).OwnerID()
	if err := apierr.RateRefusal(e.Response, wp.sends.Check(owner)); err != nil {
		return wp.refusedLater(e, dep, ui.WebhookPanel(hook.Id), "Not queued again: ", err)
	}
	if _, err := forms.Redeliver(e.App, del); errors.Is(err, forms.ErrDeliveryPending) {
		wp.sends.Refund(owner, 1) // nothing queued
		return wp.backToSite(e, dep, ui.WebhookPanel(hook.Id), ui.FlashError, "That delivery is still queued: it will be tried again by itself.")
	} else if err != nil {
		wp.sends.Refund(owner, 1)
		return err
	}
	wp.wake()
	return wp.backToSite(e, dep, ui.WebhookPanel(hook.Id), ui.FlashSuccess, "Delivery queued again.")
}

// refusedLater answers a form post refused by a rate limit (err, an
// *apierr.Error) with prefix, the API's message and, from its Retry-After,
// when to try again; any other error is the answer as it is.
func (wp *webhookPages) refusedLater(e *core.RequestEvent, dep *core.Record, panel ui.SitePanel, prefix string, err error) error {
	var ae *apierr.Error
	if !errors.As(err, &ae) {
		return err
	}
	msg := prefix + apierr.Sentence(ae.Message)
	if secs := e.Response.Header().Get("Retry-After"); secs != "" {
		msg += " Try again in " + secs + " s."
	}
	return wp.backToSite(e, dep, panel, ui.FlashError, msg)
}

// webhookDeletePage is GET .../webhooks/{webhookId}/delete: the webhook
// and the button that deletes it.
func (wp *webhookPages) webhookDeletePage(e *core.RequestEvent) error {
	w := accountWebhook(webhookOf(e))
	return wp.tab(e, func(lp ui.LayoutProps, head ui.SiteHead) templ.Component { return ui.WebhookDelete(lp, head, w) })
}

// accountSiteWebhookDelete is the button of a webhook's delete
// confirmation.
func (wp *webhookPages) accountSiteWebhookDelete(e *core.RequestEvent) error {
	dep, hook := ownedOf(e), webhookOf(e)
	if err := forms.DeleteWebhook(e.Request.Context(), e.App, hook); err != nil {
		return err
	}
	return wp.backToSite(e, dep, ui.PanelWebhooks, ui.FlashSuccess, "Webhook to "+hook.URL()+" deleted.")
}
