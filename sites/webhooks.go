package sites

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
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
)

// WebhookEvents lists every webhook event, the default subscription.
var WebhookEvents = []string{EventSubmission, EventDeploymentUpdated, EventDeploymentDeleted}

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
	deliveryWorkers    = 4        // concurrent requests
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

// DeploymentRef identifies a deployment in webhook payloads.
type DeploymentRef struct {
	ID   string `json:"id"`
	Slug string `json:"slug"`
	URL  string `json:"url"`
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
// delivery copies its webhook's url, type and secret and is due now. Its
// deployment relation is set, so it goes with the deployment, except for
// EventDeploymentDeleted, whose deliveries must outlive it: queue those
// before the delete, in its transaction. sub is used on EventSubmission
// only. app may be a transaction.
func EnqueueWebhooks(app core.App, deploymentID string, event string, dep DeploymentRef, sub *SubmissionJSON) (int, error) {
	if !slices.Contains(WebhookEvents, event) {
		return 0, fmt.Errorf("queue webhooks: unknown event %q", event)
	}
	hooks, err := app.FindRecordsByFilter(WebhooksCollection, "deployment = {:d} && active = true", "created,id", 0, 0,
		dbx.Params{"d": deploymentID})
	if err != nil {
		return 0, fmt.Errorf("find webhooks of %s: %w", deploymentID, err)
	}
	var col *core.Collection
	payloads := map[string]string{}
	now := time.Now().UTC()
	n := 0
	for _, h := range hooks {
		if !slices.Contains(h.GetStringSlice("events"), event) {
			continue
		}
		typ := h.GetString("type")
		if typ != WebhookSlack {
			typ = WebhookGeneric
		}
		payload, ok := payloads[typ]
		if !ok {
			if payload, err = webhookPayload(typ, event, dep, sub); err != nil {
				return n, err
			}
			payloads[typ] = payload
		}
		if col == nil {
			if col, err = app.FindCachedCollectionByNameOrId(DeliveriesCollection); err != nil {
				return n, fmt.Errorf("find %s collection: %w", DeliveriesCollection, err)
			}
		}
		rec := core.NewRecord(col)
		if event != EventDeploymentDeleted {
			rec.Set("deployment", deploymentID)
		}
		rec.Set("webhook", h.Id)
		rec.Set("event", event)
		rec.Set("url", h.GetString("url"))
		rec.Set("type", typ)
		rec.Set("secret", h.GetString("secret"))
		rec.Set("payload", payload)
		rec.Set("status", DeliveryPending)
		rec.Set("attempts", 0)
		rec.Set("next_attempt_at", now)
		if err := app.Save(rec); err != nil {
			return n, fmt.Errorf("queue %s delivery for webhook %s: %w", event, h.Id, err)
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

// Deliverer sends queued webhook deliveries. Zero fields take their
// defaults; set them before the first RunOnce or Run. One Deliverer per
// database: it serialises its own runs but does not coordinate with
// others.
type Deliverer struct {
	// App is the database holding the queue.
	App core.App
	// Guard refuses non-public targets at connect time.
	Guard WebhookGuard
	// Timeout bounds each request (default 10s).
	Timeout time.Duration
	// MaxAttempts is how many attempts a delivery gets before it is
	// marked failed (default 8).
	MaxAttempts int
	// Backoff is the delay after the attempt-th failed attempt (default
	// 15s·2^(attempt-1), at most 1h).
	Backoff func(attempt int) time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time

	wake     chan struct{}
	wakeOnce sync.Once
	runMu    sync.Mutex
}

// NewDeliverer returns a Deliverer over app's queue with the default
// timeout, attempts and backoff.
func NewDeliverer(app core.App, guard WebhookGuard) *Deliverer {
	d := &Deliverer{App: app, Guard: guard}
	d.wakeChan()
	return d
}

func (d *Deliverer) wakeChan() chan struct{} {
	d.wakeOnce.Do(func() {
		if d.wake == nil {
			d.wake = make(chan struct{}, 1)
		}
	})
	return d.wake
}

func (d *Deliverer) now() time.Time {
	if d.Now != nil {
		return d.Now().UTC()
	}
	return time.Now().UTC()
}

func (d *Deliverer) timeout() time.Duration {
	if d.Timeout > 0 {
		return d.Timeout
	}
	return defaultTimeout
}

func (d *Deliverer) maxAttempts() int {
	if d.MaxAttempts > 0 {
		return d.MaxAttempts
	}
	return defaultMaxAttempts
}

func (d *Deliverer) backoff(attempt int) time.Duration {
	if d.Backoff != nil {
		return d.Backoff(attempt)
	}
	return defaultBackoff(attempt)
}

// defaultBackoff is 15s·2^(attempt-1), at most 1h.
func defaultBackoff(attempt int) time.Duration {
	if attempt < 1 {
		attempt = 1
	}
	if attempt > 10 {
		return backoffMax
	}
	return min(backoffBase<<(attempt-1), backoffMax)
}

// Wake makes a running Run look for due deliveries now. It never blocks.
func (d *Deliverer) Wake() {
	select {
	case d.wakeChan() <- struct{}{}:
	default:
	}
}

// Run delivers until ctx is done: RunOnce, then wait for the earliest
// pending delivery (between 100ms and 5s) or a Wake. Errors are logged.
func (d *Deliverer) Run(ctx context.Context) {
	wake := d.wakeChan()
	for ctx.Err() == nil {
		if _, err := d.RunOnce(ctx); err != nil && ctx.Err() == nil {
			d.App.Logger().Error("webhook deliveries", "error", err)
		}
		wait, err := d.nextWait()
		if err != nil && ctx.Err() == nil {
			d.App.Logger().Error("webhook deliveries: find next due", "error", err)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
		case <-wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// nextWait is how long until the earliest pending delivery is due,
// clamped to [runWaitMin, runWaitMax].
func (d *Deliverer) nextWait() (time.Duration, error) {
	recs, err := d.App.FindRecordsByFilter(DeliveriesCollection, "status = {:s}", "next_attempt_at", 1, 0,
		dbx.Params{"s": DeliveryPending})
	if err != nil {
		return runWaitMax, fmt.Errorf("find next pending delivery: %w", err)
	}
	if len(recs) == 0 {
		return runWaitMax, nil
	}
	wait := recs[0].GetDateTime("next_attempt_at").Time().Sub(d.now())
	return min(max(wait, runWaitMin), runWaitMax), nil
}

// RunOnce sends every delivery due now, oldest due first, a few at a time,
// and returns how many requests were made. A failed attempt is scheduled
// again after Backoff or, at MaxAttempts, marked failed. Database errors
// of single deliveries are collected and the rest still run. When ctx is
// done it stops; an attempt cut short by ctx is not counted.
func (d *Deliverer) RunOnce(ctx context.Context) (int, error) {
	d.runMu.Lock()
	defer d.runMu.Unlock()

	client := d.Guard.HTTPClient(d.timeout())
	defer client.CloseIdleConnections()

	cutoff := DBTime(d.now())
	seen := map[string]bool{}
	var (
		mu        sync.Mutex
		attempted int
		errs      []error
	)
	for ctx.Err() == nil {
		recs, err := d.App.FindRecordsByFilter(DeliveriesCollection,
			"status = {:s} && next_attempt_at <= {:now}", "next_attempt_at,created,id", deliveryBatch, 0,
			dbx.Params{"s": DeliveryPending, "now": cutoff})
		if err != nil {
			errs = append(errs, fmt.Errorf("find due webhook deliveries: %w", err))
			break
		}
		var ids []string
		for _, r := range recs {
			if !seen[r.Id] {
				seen[r.Id] = true
				ids = append(ids, r.Id)
			}
		}
		if len(ids) == 0 {
			break
		}

		jobs := make(chan string)
		var wg sync.WaitGroup
		for range min(deliveryWorkers, len(ids)) {
			wg.Go(func() {
				for id := range jobs {
					sent, err := d.deliver(ctx, client, id)
					mu.Lock()
					if sent {
						attempted++
					}
					if err != nil {
						errs = append(errs, err)
					}
					mu.Unlock()
				}
			})
		}
		for _, id := range ids {
			if ctx.Err() != nil {
				break
			}
			jobs <- id
		}
		close(jobs)
		wg.Wait()

		if len(recs) < deliveryBatch {
			break
		}
	}
	return attempted, errors.Join(errs...)
}

// deliver makes one attempt at the delivery id and records its outcome.
// sent reports whether a request was made (and its outcome recorded).
func (d *Deliverer) deliver(ctx context.Context, client *http.Client, id string) (sent bool, err error) {
	rec, err := d.App.FindRecordById(DeliveriesCollection, id)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil // deleted meanwhile, with its deployment or webhook
	}
	if err != nil {
		return false, fmt.Errorf("read delivery %s: %w", id, err)
	}
	if rec.GetString("status") != DeliveryPending {
		return false, nil
	}
	if next := rec.GetDateTime("next_attempt_at"); !next.IsZero() && next.Time().After(d.now()) {
		return false, nil
	}
	if reason, err := d.webhookGone(rec); err != nil {
		return false, err
	} else if reason != "" {
		rec.Set("status", DeliveryFailed)
		rec.Set("last_error", reason)
		if err := d.App.Save(rec); err != nil {
			return false, fmt.Errorf("save delivery %s: %w", id, err)
		}
		return false, nil
	}

	now := d.now()
	status, sendErr := d.send(ctx, client, rec, now)
	if sendErr != nil && ctx.Err() != nil {
		return false, nil // shutting down: not the target's fault, retried later
	}

	// Record the outcome on a fresh copy: a cascade may have removed the
	// row or unset its webhook while the request was in flight.
	rec, err = d.App.FindRecordById(DeliveriesCollection, id)
	if errors.Is(err, sql.ErrNoRows) {
		return true, nil
	}
	if err != nil {
		return true, fmt.Errorf("read delivery %s: %w", id, err)
	}
	attempts := rec.GetInt("attempts") + 1
	rec.Set("attempts", attempts)
	rec.Set("last_status", status)
	if sendErr == nil {
		rec.Set("status", DeliveryDelivered)
		rec.Set("last_error", "")
	} else {
		rec.Set("last_error", truncateRunes(sendErr.Error(), maxLastError))
		if attempts >= d.maxAttempts() {
			rec.Set("status", DeliveryFailed)
			d.App.Logger().Warn("webhook delivery failed for good", "delivery", id, "webhook", rec.GetString("webhook"),
				"attempts", attempts, "error", sendErr)
		} else {
			rec.Set("next_attempt_at", now.Add(d.backoff(attempts)))
		}
	}
	if err := d.App.Save(rec); err != nil {
		return true, fmt.Errorf("save delivery %s: %w", id, err)
	}
	return true, nil
}

// webhookGone returns why a delivery must not be sent because its webhook
// was deleted or deactivated since it was queued, or "". A
// deployment.deleted delivery is sent regardless: its webhook goes with
// the deployment.
func (d *Deliverer) webhookGone(rec *core.Record) (string, error) {
	if rec.GetString("event") == EventDeploymentDeleted {
		return "", nil
	}
	hookID := rec.GetString("webhook")
	if hookID == "" {
		return "webhook was deleted", nil
	}
	hook, err := d.App.FindRecordById(WebhooksCollection, hookID)
	if errors.Is(err, sql.ErrNoRows) {
		return "webhook was deleted", nil
	}
	if err != nil {
		return "", fmt.Errorf("read webhook %s: %w", hookID, err)
	}
	if !hook.GetBool("active") {
		return "webhook is inactive", nil
	}
	return "", nil
}

// send POSTs the delivery and returns the answer's status (0 without an
// answer) and nil for a 2xx, else the reason it failed.
func (d *Deliverer) send(ctx context.Context, client *http.Client, rec *core.Record, now time.Time) (int, error) {
	body := []byte(rec.GetString("payload"))
	if rec.GetString("type") != WebhookSlack {
		var err error
		if body, err = addSentAt(body, now); err != nil {
			return 0, err
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rec.GetString("url"), bytes.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", webhookUserAgent)
	req.Header.Set(HeaderWebhookEvent, rec.GetString("event"))
	req.Header.Set(HeaderWebhookDelivery, rec.Id)
	req.Header.Set(HeaderWebhookSignature, SignWebhook(rec.GetString("secret"), body))

	resp, err := client.Do(req)
	if err != nil {
		// Drop the URL (up to 2 KiB, and in the row already) so the
		// cause fits in last_error.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return 0, fmt.Errorf("request failed: %w", err)
	}
	defer resp.Body.Close()
	answer, readErr := io.ReadAll(io.LimitReader(resp.Body, maxResponseRead))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp.StatusCode, nil
	}
	msg := fmt.Sprintf("HTTP %d", resp.StatusCode)
	if snippet := oneLine(string(answer)); snippet != "" && readErr == nil && utf8.ValidString(snippet) {
		msg += ": " + truncateRunes(snippet, 200)
	}
	return resp.StatusCode, errors.New(msg)
}

// addSentAt appends "sent_at" (RFC 3339, UTC) as the last field of the
// stored JSON object payload.
func addSentAt(payload []byte, now time.Time) ([]byte, error) {
	p := bytes.TrimSpace(payload)
	if len(p) < 2 || p[0] != '{' || p[len(p)-1] != '}' || !json.Valid(p) {
		return nil, errors.New("stored payload is not a JSON object")
	}
	stamp, _ := json.Marshal(now.UTC().Format(time.RFC3339))
	out := make([]byte, 0, len(p)+len(stamp)+12)
	out = append(out, p[:len(p)-1]...)
	if len(bytes.TrimSpace(p[1:len(p)-1])) > 0 {
		out = append(out, ',')
	}
	out = append(out, `"sent_at":`...)
	out = append(out, stamp...)
	return append(out, '}'), nil
}
