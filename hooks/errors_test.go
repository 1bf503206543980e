package hooks

import (
	"context"
	"errors"
	"fmt"
	"testing"
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
