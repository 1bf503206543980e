package domains

import (
	"context"
	"time"
)

// PerRun bounds the pending domains one CheckPending checks.
const PerRun = 50

// CheckPending is the verification job's run: the pending domains that
// are due, each on its own backoff (Backoff) until it is verified or has
// been pending for MaxPending, at most PerRun of them, within five
// minutes (CheckDue).
func (s *Service) CheckPending() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s.CheckDue(ctx, PerRun)
}
