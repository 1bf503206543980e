package certs

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/certmagic"
)

// allowOnDemand is the on-demand decision, asked during a handshake for a
// name with no certificate in memory (before certmagic looks in storage)
// and before an on-demand renewal. It allows the names allow allows
// (www.<web host> and live sites, for sitedrop) only. A name with a
// certificate in storage is a load or a renewal; any other takes one of
// the hour's new certificates, so a burst of anonymous deploys cannot use
// up the CA's rate limits for the whole sites domain.
func (m *Manager) allowOnDemand(ctx context.Context, allow func(context.Context, string) error, logger *slog.Logger, budget *orderBudget, name string) error {
	name = strings.ToLower(strings.TrimSuffix(name, "."))
	if err := allow(ctx, name); err != nil {
		return err
	}
	if m.storage.Exists(ctx, certmagic.StorageKeys.SiteCert(m.siteIssuer.IssuerKey(), name)) {
		return nil
	}
	if ok, first := budget.allow(name, time.Now()); !ok {
		if first { // once per window, not once per handshake
			logger.Warn("on-demand certificates refused until the next hour: budget used up (--new-certs-per-hour)",
				"name", name)
		}
		return fmt.Errorf("no certificate for %q: the hour's budget of new certificates is used up", name)
	}
	return nil
}

// orderBudget bounds the names that may have a new on-demand certificate
// ordered in each window. A name is charged once per window, however many
// handshakes (or failed orders) it takes. max < 0 allows all; 0 none.
type orderBudget struct {
	max    int
	window time.Duration

	mu      sync.Mutex
	start   time.Time
	charged map[string]bool
	refused bool
}

func newOrderBudget(max int, window time.Duration) *orderBudget {
	return &orderBudget{max: max, window: window, charged: map[string]bool{}}
}

// allow charges name and reports whether it is within the budget; first
// is true for the first refusal of the window.
func (b *orderBudget) allow(name string, now time.Time) (ok, first bool) {
	if b.max < 0 {
		return true, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if now.Sub(b.start) >= b.window {
		b.start, b.refused = now, false
		clear(b.charged)
	}
	if b.charged[name] {
		return true, false
	}
	if len(b.charged) >= b.max {
		first = !b.refused
		b.refused = true
		return false, first
	}
	b.charged[name] = true
	return true, false
}
