package sites

import (
	"context"
	"sync/atomic"
	"time"

	"sitedrop/sites/accounts"
)

// Upkeep is the sites' periodic cleanup: expired anonymous deployments,
// renamed sites' old slugs, sign-in codes and sessions (the moderation
// page's too) go (Expire), and content no version
// references any more is collected (Collect). The app's cron runs both.
type Upkeep struct {
	// Sites are the sites kept.
	Sites *Service
	// Grace spares blobs younger than it (a deploy still uploading).
	Grace time.Duration
	// Settled reports that every change is published to the replicas
	// (nil: there are none). Until then nothing is collected: a change
	// not yet published may drop blobs that replicas still serve.
	Settled func() bool
	// due is set when content may have become unreferenced since the
	// collector last ran.
	due atomic.Bool
}

// MarkDue records that content may have become unreferenced (a
// deployment or version deleted): the next Expire collects it.
func (u *Upkeep) MarkDue() { u.due.Store(true) }

// TakeDue reports whether a collection is due, and clears it.
func (u *Upkeep) TakeDue() bool { return u.due.Swap(false) }

// Expire purges expired anonymous deployments, sign-in codes and
// sessions (the users' and the moderation page's), then collects content when anything became unreferenced.
// It logs what it did to the app's logger.
func (u *Upkeep) Expire() {
	now := time.Now()
	log := u.Sites.app.Logger()
	n, err := u.Sites.PurgeExpired(now)
	if err != nil {
		log.Error("purge expired deployments", "error", err)
	}
	if n > 0 {
		log.Info("purged expired deployments", "count", n)
	}
	n, err = u.Sites.PurgeExpiredRedirects(now)
	if err != nil {
		log.Error("purge expired old slugs", "error", err)
	}
	if n > 0 {
		log.Info("freed the old slugs of renamed sites", "count", n)
	}
	if err := accounts.PurgeExpiredLoginCodes(u.Sites.app, now); err != nil {
		log.Error("purge expired login codes", "error", err)
	}
	if err := accounts.PurgeExpiredSessions(u.Sites.app, now); err != nil {
		log.Error("purge expired sessions", "error", err)
	}
	if err := accounts.PurgeExpiredAdminSessions(u.Sites.app, now); err != nil {
		log.Error("purge expired admin sessions", "error", err)
	}
	if u.TakeDue() {
		u.Collect()
	}
}

// Collect deletes blobs that no version references, within ten minutes.
// What it could not remove yet (too young, an error, changes not yet
// published) is left for the next Expire.
func (u *Upkeep) Collect() {
	if u.Settled != nil && !u.Settled() {
		// the publisher spares them first (publish.Config.Retention)
		u.MarkDue()
		return
	}
	log := u.Sites.app.Logger()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	res, err := u.Sites.CollectGarbage(ctx, u.Grace)
	if err != nil {
		log.Error("collect unreferenced blobs", "error", err)
		u.MarkDue()
		return
	}
	if res.Deferred > 0 {
		// too young to remove yet: try again on the next minute's run
		u.MarkDue()
	}
	if res.Removed > 0 {
		log.Info("collected unreferenced blobs", "count", res.Removed)
	}
}
