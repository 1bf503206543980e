package hooks

import (
	"time"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/hook"

	"sitedrop/hooks/server/metrics"
	"sitedrop/sites/forms"
)

// deployOps are the routes deployMetrics measures (their patterns, as
// the router matched them) and their op label.
var deployOps = map[string]string{
	"POST /deploy":     "create",
	"PUT /deploy/{id}": "update",
}

// deployMetrics counts the deploys (POST /deploy, PUT /deploy/{id}) by
// result and duration (metrics.Deploy): it runs outside the JSON errors
// middleware, so it sees the status that one writes. Every other request
// passes through untouched. (The waits for a deploy slot are the gate's
// to tell: intake.Gate.Observe.)
func deployMetrics(m *metrics.Metrics) *hook.Handler[*core.RequestEvent] {
	return &hook.Handler[*core.RequestEvent]{
		Id:       deployMetricsMiddlewareId,
		Priority: deployMetricsMiddlewarePriority,
		Func: func(e *core.RequestEvent) error {
			op, ok := deployOps[e.Request.Pattern]
			if !ok {
				return e.Next()
			}
			start := time.Now()
			err := e.Next()
			status := e.Status()
			if !e.Written() && err != nil {
				ae, _ := toAPIError(err)
				status = ae.Status
			}
			m.Deploy(op, status, time.Since(start))
			return err
		},
	}
}

// bindMetricsHooks counts what the app's hooks see: every e-mail handed
// to the mailer (sent or failed), and every webhook delivery attempt by
// its result, from the deliveries' records (whoever saves them).
func bindMetricsHooks(app core.App, m *metrics.Metrics) {
	app.OnMailerSend().BindFunc(func(e *core.MailerEvent) error {
		err := e.Next()
		m.Email(err)
		return err
	})
	app.OnRecordAfterUpdateSuccess(forms.DeliveriesCollection).BindFunc(func(e *core.RecordEvent) error {
		if result := deliveryResult(forms.DeliveryOf(e.Record.Original()), forms.DeliveryOf(e.Record)); result != "" {
			m.WebhookDelivery(result)
		}
		return e.Next()
	})
}

// deliveryResult is what an update of a delivery from old to d tells: a
// delivery (WebhookDelivered), a failure for good (WebhookFailed), a
// failed attempt with another due (WebhookRetrying), or nothing ("": a
// redelivery queued again, a postponement).
func deliveryResult(old, d *forms.Delivery) string {
	switch {
	case d.Status() == forms.DeliveryDelivered && old.Status() != forms.DeliveryDelivered:
		return metrics.WebhookDelivered
	case d.Status() == forms.DeliveryFailed && old.Status() != forms.DeliveryFailed:
		return metrics.WebhookFailed
	case d.Status() == forms.DeliveryPending && d.Attempts() > old.Attempts():
		return metrics.WebhookRetrying
	}
	return ""
}
