package sites

// Collections of form submissions and webhooks.
const (
	// SubmissionsCollection holds form data posted to deployments.
	SubmissionsCollection = "submissions"
	// WebhooksCollection holds the webhooks of deployments.
	WebhooksCollection = "webhooks"
	// DeliveriesCollection holds queued and finished webhook deliveries.
	DeliveriesCollection = "webhook_deliveries"
)
