// Package forms holds what a deployment's visitors send and where it goes:
// the submissions, webhooks and deliveries collections behind typed record
// models (Submission, Webhook, Delivery, and forms' view of a Deployment:
// core.BaseRecordProxy with typed getters, each field name written once,
// in its *_model.go file) and their queries; storing a submission with its
// webhook deliveries (Submit), read from the visitor's body first
// (ParseSubmission: its limits, honeypot and redirect); the CSV export (CSVExport); the query of the
// notification mails that are due (FindDueNotifications, FindNotification);
// webhook payloads (generic and Slack) and their signature; the Deliverer
// that sends queued deliveries with retries; the dashboard's test sends,
// redeliveries and delivery log; and the SSRF guard that every webhook URL
// passes when it is saved and again when it is dialled.
//
// Refusals are domain errors (*WebhookError, ErrSubmissionNotFound,
// ErrWebhookNotFound, ErrDeliveryNotFound, ErrDeliveryPending,
// ErrWebhookGone), never HTTP statuses. The routes, the rendering and
// sending of the notification mails, and the record hooks that queue
// deployment events are in hooks. A form post, from the handler:
//
//	dep, err := forms.FindAcceptingDeployment(app, id) // sites.ErrNotFound if closed
//	post, err := forms.ParseSubmission(body, r.Header.Get("Content-Type"))
//	sub, err := forms.Submit(app, dep.Ref(siteURL), post.Data, post.Order) // unless post.Honeypot
//	deliverer.Wake()
package forms

// Collections of form submissions and webhooks.
const (
	// SubmissionsCollection holds form data posted to deployments.
	SubmissionsCollection = "submissions"
	// WebhooksCollection holds the webhooks of deployments.
	WebhooksCollection = "webhooks"
	// DeliveriesCollection holds queued and finished webhook deliveries.
	DeliveriesCollection = "webhook_deliveries"
)
