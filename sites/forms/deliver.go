package forms

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"
	"unicode/utf8"

	"sitedrop/sites"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"
)

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

	cutoff := sites.DBTime(d.now())
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
