package apierr

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"sitedrop/sites/ratelimit"
)

// TestRateRefusal: a limit's refusal is the 429 with its Retry-After set
// on the response at once, the contract's message unless the limit has
// its own; any other error, or none, passes as it is.
func TestRateRefusal(t *testing.T) {
	w := httptest.NewRecorder()
	err := RateRefusal(w, fmt.Errorf("deploy: %w", &ratelimit.Error{RetryAfter: 2400 * time.Millisecond}))
	var ae *Error
	if !errors.As(err, &ae) || ae.Status != http.StatusTooManyRequests || ae.Message != MsgRateLimited || ae.RetryAfter != 2 {
		t.Fatalf("refusal: %#v", err)
	}
	if got := w.Header().Get("Retry-After"); got != "2" {
		t.Errorf("Retry-After %q, want 2", got)
	}
	if ae := RateLimited(&ratelimit.Error{RetryAfter: time.Minute, Msg: "Too many tests"}); ae.Message != "Too many tests" || ae.RetryAfter != 60 {
		t.Errorf("own message: %#v", ae)
	}
	other := errors.New("disk full")
	w = httptest.NewRecorder()
	if err := RateRefusal(w, other); err != other || w.Header().Get("Retry-After") != "" {
		t.Errorf("another error: %v, Retry-After %q", err, w.Header().Get("Retry-After"))
	}
	if err := RateRefusal(w, nil); err != nil {
		t.Errorf("no refusal: %v", err)
	}
}

// TestFail: the message is formatted only with arguments, so a message
// that holds a % (a slug, a path) is kept as it is.
func TestFail(t *testing.T) {
	if e := Fail(http.StatusBadRequest, "100% sure"); e.Message != "100% sure" || e.Error() != "100% sure" || e.Status != 400 {
		t.Errorf("no args: %#v", e)
	}
	if e := Fail(http.StatusForbidden, "limit %d on %s", 3, "free"); e.Message != "limit 3 on free" {
		t.Errorf("args: %q", e.Message)
	}
	h := http.Header{}
	Fail(400, "x").SetRetryAfter(h)
	(&Error{RetryAfter: 30}).SetRetryAfter(h)
	if got := h.Values("Retry-After"); len(got) != 1 || got[0] != "30" {
		t.Errorf("Retry-After %q, want only 30", got)
	}
}

// TestSentence: a flash's sentence gets one full stop.
func TestSentence(t *testing.T) {
	for in, want := range map[string]string{"Slug already taken": "Slug already taken.", "Done.": "Done."} {
		if got := Sentence(in); got != want {
			t.Errorf("Sentence(%q) = %q, want %q", in, got, want)
		}
	}
}
