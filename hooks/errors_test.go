package hooks

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"sitedrop/sites/intake"
	"sitedrop/sites/ratelimit"
)

// TestToAPIErrorClientGone: a handler that stopped because its client went
// away (a cancelled deploy) is logged as 499, the client's doing, not as a
// server error.
func TestToAPIErrorClientGone(t *testing.T) {
	scenarios := []struct {
		name   string
		err    error
		status int
		known  bool
	}{
		{"cancelled, wrapped", fmt.Errorf("deploy: %w", context.Canceled), statusClientClosed, true},
		{"deadline is ours", fmt.Errorf("query: %w", context.DeadlineExceeded), 500, false},
		{"other", errors.New("disk full"), 500, false},
	}
	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) {
			ae, known := toAPIError(s.err)
			if ae.Status != s.status || known != s.known {
				t.Errorf("toAPIError(%v) = %d, %v; want %d, %v", s.err, ae.Status, known, s.status, s.known)
			}
		})
	}
}

// TestIntakeRefusals: the refusals of sites/intake and of the rate limits
// answer with the contract's statuses, messages and Retry-After, as the
// handlers' own errors did before they moved.
func TestIntakeRefusals(t *testing.T) {
	for _, s := range []struct {
		err        error
		status     int
		msg        string
		retryAfter int
	}{
		{&intake.TooLargeError{Limit: 50 << 20}, 413, "Request body too large: the limit is 50 MiB", 0},
		{&intake.TooSlowError{Grace: 10 * time.Second, MinRate: 16 << 10}, 408, "Request body too slow: after 10s it must arrive at 16 KiB a second or more", 0},
		{fmt.Errorf("decode: %w", &intake.InvalidError{Msg: "Malformed JSON: unexpected end of input"}), 400, "Malformed JSON: unexpected end of input", 0},
		{&intake.TooManyFilesError{Limit: 3}, 413, "Too many files: the limit is 3", 0},
		{&intake.SiteTooLargeError{Limit: 10 << 20, Anonymous: true}, 413, "Site too large for an anonymous deploy: the limit is 10 MiB; deploy with an API key", 0},
		{&intake.SiteTooLargeError{Limit: 200 << 20}, 413, "Site too large: the files a deploy names may total 200 MiB", 0},
		{intake.ErrHTMLRequired, 400, msgHTMLRequired, 0},
		{intake.ErrBothContent, 400, msgBothContent, 0},
		{fmt.Errorf("reserve: %w", intake.ErrBusy), 503, msgServerBusy, 5},
		{&intake.WorkBudgetError{Limit: 8 * time.Second}, 503, "Deploy took too long: a deploy must be processed within 8s, and nothing was deployed; try again, or deploy fewer or smaller files", 5},
		{&ratelimit.Error{RetryAfter: 1400 * time.Millisecond}, 429, msgRateLimited, 1},
		{&ratelimit.Error{RetryAfter: time.Hour, Msg: "Upload limit reached"}, 429, "Upload limit reached", 3600},
		{fmt.Errorf("waiting for memory: %w", context.Canceled), statusClientClosed, msgClientClosed, 0},
	} {
		ae, known := toAPIError(s.err)
		if !known || ae.Status != s.status || ae.Message != s.msg || ae.RetryAfter != s.retryAfter {
			t.Errorf("toAPIError(%v) = %d %q Retry-After %d (known %v), want %d %q %d", s.err, ae.Status, ae.Message, ae.RetryAfter, known, s.status, s.msg, s.retryAfter)
		}
	}
}
