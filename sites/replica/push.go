package replica

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"sitedrop/sites/publish"
	"sitedrop/sites/store/s3store"
)

// Bounds of the long poll to the primary.
const (
	// longPollTimeout bounds one long poll: the primary answers within
	// publish.DefaultWaitTimeout; a primary that vanished without closing
	// the connection is given up after this.
	longPollTimeout = publish.DefaultWaitTimeout + 15*time.Second
	// minFollowBackoff and maxFollowBackoff bound the wait before a long
	// poll is tried again after a failure (doubling).
	minFollowBackoff = time.Second
	maxFollowBackoff = 30 * time.Second
	// minAskGap is the least time between the starts of two long polls:
	// a primary (or anything at --primary) that answers at once every
	// time costs at most ten requests a second, never a tight loop.
	minAskGap = 100 * time.Millisecond
)

// errUnauthorized is the primary's 401: the replica token is not (or no
// longer) the one in the store.
var errUnauthorized = errors.New("the primary refused the replica token (401)")

// Following reports whether the long poll to the primary (Config.Primary)
// is healthy: its last answer was a position. While it is, the store is
// read every Fallback only.
func (r *Replica) Following() bool { return r.following.Load() }

// follow holds the long poll to the primary until ctx ends: each answer
// that names another position than the last one asks Run for a poll at
// once. A failure (the primary down or refusing) makes Run poll every
// Poll again, at once, and the long poll is tried again with backoff. The
// replica token is read from the store at start and after a 401.
func (r *Replica) follow(ctx context.Context) {
	var token string
	var at publish.Position // what the primary last answered
	backoff := minFollowBackoff
	asked := false // a first ask without a token was refused
	for ctx.Err() == nil {
		var err error
		if token == "" {
			token, err = publish.ReadToken(ctx, r.cfg.Objects)
			if errors.Is(err, s3store.ErrNotFound) {
				err = nil // the primary writes it on the first ask
			}
		}
		var p publish.Position
		started := time.Now()
		if err == nil {
			p, err = r.ask(ctx, token, at)
		}
		if err == nil {
			if !r.following.Swap(true) {
				r.log.Info("replica: following the primary's changes; polling the store every "+r.cfg.Fallback.String(), "primary", r.cfg.Primary)
			}
			backoff = minFollowBackoff
			if p != at {
				at = p
				r.nudge()
			}
			sleepCtx(ctx, minAskGap-time.Since(started))
			continue
		}
		if ctx.Err() != nil {
			break
		}
		if errors.Is(err, errUnauthorized) {
			if token == "" && !asked {
				// none was in the store: the primary has just written it
				asked = true
				continue
			}
			token = "" // read it again
		}
		if r.following.Swap(false) {
			r.nudge() // a change may be missed meanwhile: poll now
		}
		r.log.Warn("replica: the long poll to the primary failed; polling the store every "+r.cfg.Poll.String(),
			"primary", r.cfg.Primary, "error", err, "retry_in", backoff)
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
		backoff = min(2*backoff, maxFollowBackoff)
	}
	r.following.Store(false)
}

// ask makes one long poll: the position the primary answers once it
// differs from after (or after its wait, the same one).
func (r *Replica) ask(ctx context.Context, token string, after publish.Position) (publish.Position, error) {
	ctx, cancel := context.WithTimeout(ctx, longPollTimeout)
	defer cancel()
	u := r.cfg.Primary + publish.ChangesPath + "?after=" + url.QueryEscape(after.String())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return publish.Position{}, fmt.Errorf("long poll: %w", err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := r.cfg.Client.Do(req)
	if err != nil {
		return publish.Position{}, fmt.Errorf("long poll: %w", err)
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
		return publish.ReadChangesAnswer(resp.Body)
	case http.StatusUnauthorized:
		return publish.Position{}, errUnauthorized
	}
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	return publish.Position{}, fmt.Errorf("long poll: %s: %s", resp.Status, strings.TrimSpace(string(msg)))
}

// sleepCtx waits d (nothing when d <= 0) or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
