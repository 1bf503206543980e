// Package forms holds what a deployment's visitors send and where it goes:
// the submissions, webhooks and deliveries collections, webhook payloads
// (generic and Slack) and their signature, the Deliverer that sends queued
// deliveries with retries, the dashboard's test sends, redeliveries and
// delivery log, and the SSRF guard that every webhook URL passes
// when it is saved and again when it is dialled. The routes, the
// notification mails and the record hooks that queue events are in hooks.
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
