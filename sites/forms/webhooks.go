package forms

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"
)

// Webhook delivery: EnqueueWebhooks queues one row per subscribed webhook
// in webhook_deliveries (in the caller's transaction), and a Deliverer
// sends due rows, retrying with exponential backoff. The queue lives in
// the database, so it survives restarts; delivery is at least once.

// Webhook events.
const (
	// EventSubmission fires for each stored form submission.
	EventSubmission = "submission"
	// EventDeploymentUpdated fires when a deployment's live content changes.
	EventDeploymentUpdated = "deployment.updated"
	// EventDeploymentDeleted fires when a deployment is deleted.
	EventDeploymentDeleted = "deployment.deleted"
	// EventDeploymentDraft fires when a version is saved as a draft (not
	// live): its payload names the version and its preview URL.
	EventDeploymentDraft = "deployment.draft"
	// EventDeploymentRenamed fires when a deployment's slug changes: its
	// payload names the new slug and URL (the old host redirects).
	EventDeploymentRenamed = "deployment.renamed"
)

// WebhookEvents lists every webhook event, the default subscription.
var WebhookEvents = []string{EventSubmission, EventDeploymentUpdated, EventDeploymentDeleted, EventDeploymentDraft, EventDeploymentRenamed}

// Webhook types.
const (
	// WebhookGeneric posts {event, deployment, submission, sent_at}.
	WebhookGeneric = "generic"
	// WebhookSlack posts a Slack incoming-webhook message {"text": ...}.
	WebhookSlack = "slack"
)

// Delivery statuses.
const (
	// DeliveryPending is queued, waiting for its first or next attempt.
	DeliveryPending = "pending"
	// DeliveryDelivered was answered with a 2xx.
	DeliveryDelivered = "delivered"
	// DeliveryFailed gave up: attempts exhausted, or its webhook is gone.
	DeliveryFailed = "failed"
)

// Delivery request headers.
const (
	// HeaderWebhookEvent carries the event name.
	HeaderWebhookEvent = "X-Sitedrop-Event"
	// HeaderWebhookDelivery carries the delivery id, the same on retries.
	HeaderWebhookDelivery = "X-Sitedrop-Delivery"
	// HeaderWebhookSignature carries SignWebhook of the body.
	HeaderWebhookSignature = "X-Sitedrop-Signature"
	webhookUserAgent       = "sitedrop-webhooks"
)

// Limits.
const (
	deliveryBatch      = 50       // rows read per query
	defaultSenders     = 4        // concurrent requests
	maxResponseRead    = 64 << 10 // bytes read of an answer
	maxLastError       = 1000     // runes kept of last_error
	slackValueMax      = 200      // runes per submitted value in Slack text
	slackTextMax       = 3000     // runes of the whole Slack text
	runWaitMin         = 100 * time.Millisecond
	runWaitMax         = 5 * time.Second
	defaultTimeout     = 10 * time.Second
	defaultMaxAttempts = 8
	backoffBase        = 15 * time.Second
	backoffMax         = time.Hour
)

// MaxPendingDeliveries is how many pending deliveries a webhook keeps:
// queueing one more marks its oldest pending one failed ("dropped: the
// receiver's backlog is full"), so a receiver that never answers cannot
// grow the queue without bound.
const MaxPendingDeliveries = 1000

// DeploymentRef identifies a deployment in webhook payloads. The
// deployment events name a version too: the one now live
// (deployment.updated), the draft (deployment.draft), the one that was
// live (deployment.deleted, without a preview URL: it is gone).
type DeploymentRef struct {
	ID   string `json:"id"`
	Slug string `json:"slug"`
	URL  string `json:"url"`
	// Version is the version's number; 0 (left out) for none.
	Version int `json:"version,omitempty"`
	// PreviewURL is the version's own address ("" left out: none, or its
	// host name would be too long).
	PreviewURL string `json:"preview_url,omitempty"`
}

// SubmissionJSON is a form submission as the API shows it.
type SubmissionJSON struct {
	ID        string         `json:"id"`
	Data      map[string]any `json:"data"`
	CreatedAt string         `json:"created_at"`
}

// genericPayload is a generic delivery's body before sent_at is added.
type genericPayload struct {
	Event      string          `json:"event"`
	Deployment DeploymentRef   `json:"deployment"`
	Submission *SubmissionJSON `json:"submission,omitempty"`
}

// EnqueueWebhooks queues event for every active webhook of the deployment
// subscribed to it, and returns how many deliveries were queued. Each
// delivery copies its webhook's url, type and secret, names the
// deployment's owner as its account (see Deliverer) and is due now. Its
// deployment relation is set, so it goes with the deployment, except for
// EventDeploymentDeleted, whose deliveries must outlive it: queue those
// before the delete, in its transaction. sub is used on EventSubmission
// only. app may be a transaction.
func EnqueueWebhooks(app core.App, deploymentID string, event string, dep DeploymentRef, sub *SubmissionJSON) (int, error) {
	if !slices.Contains(WebhookEvents, event) {
		return 0, fmt.Errorf("queue webhooks: unknown event %q", event)
	}
	var hooks []*Webhook
	err := app.RecordQuery(WebhooksCollection).
		AndWhere(dbx.HashExp{webhookDeployment: deploymentID, webhookActive: true}).
		OrderBy(webhookCreated+" ASC", "id ASC").All(&hooks)
	if err != nil {
		return 0, fmt.Errorf("find webhooks of %s: %w", deploymentID, err)
	}
	payloads := map[string]string{}
	now := time.Now().UTC()
	n := 0
	account, looked := "", false
	for _, h := range hooks {
		if !slices.Contains(h.Events(), event) {
			continue
		}
		if !looked {
			if account, err = deploymentAccount(app, deploymentID); err != nil {
				return n, err
			}
			looked = true
		}
		typ := h.PayloadType()
		payload, ok := payloads[typ]
		if !ok {
			if payload, err = webhookPayload(typ, event, dep, sub); err != nil {
				return n, err
			}
			payloads[typ] = payload
		}
		depID := deploymentID
		if event == EventDeploymentDeleted {
			depID = "" // its deliveries outlive the deployment
		}
		d, err := newDelivery(app, h, depID, account, event, typ, payload, now)
		if err != nil {
			return n, err
		}
		if err := app.Save(d); err != nil {
			return n, fmt.Errorf("queue %s delivery for webhook %s: %w", event, h.Id, err)
		}
		if err := capBacklog(app, h.Id); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// webhookPayload is the stored body of a delivery: for generic webhooks
// the JSON event without sent_at (added at each attempt), for Slack the
// final message.
func webhookPayload(typ, event string, dep DeploymentRef, sub *SubmissionJSON) (string, error) {
	var v any
	if typ == WebhookSlack {
		v = map[string]string{"text": slackText(event, dep, sub)}
	} else {
		p := genericPayload{Event: event, Deployment: dep}
		if event == EventSubmission && sub != nil {
			s := *sub
			if s.Data == nil {
				s.Data = map[string]any{}
			}
			p.Submission = &s
		}
		v = p
	}
	b, err := marshalJSON(v)
	if err != nil {
		return "", fmt.Errorf("encode %s webhook payload: %w", typ, err)
	}
	return string(b), nil
}

// marshalJSON encodes v compactly without escaping <, > and &.
func marshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// slackText is the one-line Slack message for event.
func slackText(event string, dep DeploymentRef, sub *SubmissionJSON) string {
	name := slackEscape(dep.Slug)
	switch event {
	case EventDeploymentUpdated:
		if dep.URL == "" {
			return "Deployment " + name + " was updated"
		}
		return "Deployment " + name + " was updated: " + slackEscape(dep.URL)
	case EventDeploymentDeleted:
		return "Deployment " + name + " was deleted"
	case EventDeploymentRenamed:
		if dep.URL == "" {
			return "Deployment renamed to " + name
		}
		return "Deployment renamed to " + name + ": " + slackEscape(dep.URL)
	case EventDeploymentDraft:
		text := "Deployment " + name + " has a draft"
		if dep.Version > 0 {
			text += " (version " + strconv.Itoa(dep.Version) + ")"
		}
		if dep.PreviewURL != "" {
			text += ": " + slackEscape(dep.PreviewURL)
		}
		return text
	case EventTest:
		return "Test message from sitedrop for " + name
	}
	var b strings.Builder
	b.WriteString("New submission on ")
	if dep.URL != "" {
		b.WriteString("<" + slackEscape(dep.URL) + "|" + name + ">")
	} else {
		b.WriteString(name)
	}
	if sub == nil || len(sub.Data) == 0 {
		return b.String()
	}
	keys := make([]string, 0, len(sub.Data))
	for k := range sub.Data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	length := utf8.RuneCountInString(b.String())
	for i, k := range keys {
		sep := ", "
		if i == 0 {
			sep = ": "
		}
		field := sep + slackField(k) + "=" + slackField(sub.Data[k])
		n := utf8.RuneCountInString(field)
		// Keep room for ", …" when more fields follow.
		room := slackTextMax - length
		if i < len(keys)-1 {
			room -= 3
		}
		if n > room {
			b.WriteString(sep + "…")
			break
		}
		b.WriteString(field)
		length += n
	}
	return truncateRunes(b.String(), slackTextMax)
}

// slackField renders a submitted key or value on one line, at most
// slackValueMax runes before escaping.
func slackField(v any) string {
	var s string
	switch x := v.(type) {
	case nil:
	case string:
		s = x
	default:
		if b, err := marshalJSON(x); err == nil {
			s = string(b)
		} else {
			s = fmt.Sprint(x)
		}
	}
	return slackEscape(truncateRunes(oneLine(s), slackValueMax))
}

// oneLine turns control characters and runs of white space into single
// spaces and trims the ends.
func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

// slackEscape escapes the characters Slack's mrkdwn reserves, so submitted
// text cannot form links or mentions.
func slackEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// truncateRunes cuts s to at most n runes, ending in "…" when cut.
func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// SignWebhook returns the X-Sitedrop-Signature value of body:
// "sha256=" and the hex HMAC-SHA256 of body keyed with secret.
func SignWebhook(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}
