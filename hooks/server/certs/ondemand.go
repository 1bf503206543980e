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

// Class is whose name an on-demand certificate is for. The hourly budget
// of new certificates is shared between the classes so that one cannot
// take it all from the other (see orderBudget).
type Class int

const (
	// Owned names belong to an account (a site with an owner, a verified
	// custom domain) or to the server (www.<web host>).
	Owned Class = iota
	// Anonymous names are those of anonymous sites, which anyone may
	// deploy without an account.
	Anonymous
)

// String names the class in logs.
func (c Class) String() string {
	if c == Anonymous {
		return "anonymous"
	}
	return "owned"
}

// allowOnDemand is the on-demand decision, asked during a handshake for a
// name with no certificate in memory (before certmagic looks in storage)
// and before an on-demand renewal. It allows the names allow allows
// (www.<web host>, live sites and verified custom domains, for sitedrop)
// only. A name with a certificate in storage is a load or a renewal; any
// other takes one of the hour's new certificates, of its class's share
// (see orderBudget), so a burst of anonymous deploys can neither use up
// the CA's rate limits for the whole sites domain nor leave owners' new
// sites without a certificate.
func (m *Manager) allowOnDemand(ctx context.Context, allow func(context.Context, string) (Class, error), logger *slog.Logger, budget *orderBudget, name string) error {
	name = strings.ToLower(strings.TrimSuffix(name, "."))
	class, err := allow(ctx, name)
	if err != nil {
		return err
	}
	if m.storage.Exists(ctx, certmagic.StorageKeys.SiteCert(m.siteIssuer.IssuerKey(), name)) {
		return nil
	}
	if ok, first := budget.allow(name, class, time.Now()); !ok {
		if first { // once per window and class, not once per handshake
			logger.Warn("on-demand certificates refused until the next hour: budget used up (--new-certs-per-hour)",
				"name", name, "class", class.String())
		}
		return fmt.Errorf("no certificate for %q: the hour's budget of new certificates for %s sites is used up", name, class)
	}
	return nil
}

// orderBudget bounds the names that may have a new on-demand certificate
// ordered in each window: max in all (max < 0 allows all; 0 none), of
// which anonymous names may take at most half (rounded down). Owned names
// may take the whole budget while anonymous ones leave it unused, and
// always have at least the other half (max - max/2), however many
// anonymous names ask first. A name is charged once per window, however
// many handshakes (or failed orders) it takes.
type orderBudget struct {
	max    int
	window time.Duration

	mu      sync.Mutex
	start   time.Time
	charged map[string]Class
	anon    int // anonymous names charged this window
	refused [Anonymous + 1]bool
}

func newOrderBudget(max int, window time.Duration) *orderBudget {
	return &orderBudget{max: max, window: window, charged: map[string]Class{}}
}

// anonShare is the most names of class Anonymous charged in a window.
func (b *orderBudget) anonShare() int { return b.max / 2 }

// allow charges name, of class, and reports whether it is within the
// budget; first is true for the first refusal of the window for the
// class.
func (b *orderBudget) allow(name string, class Class, now time.Time) (ok, first bool) {
	if b.max < 0 {
		return true, false
	}
	if class != Anonymous {
		class = Owned
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if now.Sub(b.start) >= b.window {
		b.start, b.anon, b.refused = now, 0, [Anonymous + 1]bool{}
		clear(b.charged)
	}
	if _, ok := b.charged[name]; ok {
		return true, false
	}
	full := len(b.charged) >= b.max
	if class == Anonymous && b.anon >= b.anonShare() {
		full = true
	}
	if full {
		first = !b.refused[class]
		b.refused[class] = true
		return false, first
	}
	b.charged[name] = class
	if class == Anonymous {
		b.anon++
	}
	return true, false
}
