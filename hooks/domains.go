package hooks

import (
	"time"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/hooks/internal/apierr"
	"sitedrop/sites/domains"
	"sitedrop/sites/ratelimit"
)

// What the API and the site page share about custom domains: the
// per-account limit of their actions, and the answer that lists one. The
// rules (plan limits, the DNS budget, the check) are sites/domains'.

// domainActionsPerMinute bounds the adds, removals and checks of one
// account's domains a minute, the API and the site page together (in
// memory: each server counts its own). It is a limit of the routes, as
// the other per-account limits of hooks are; the server's DNS budget,
// which the job spends too, is domains.Service's.
const domainActionsPerMinute = 10

// domainJSON is a custom domain as the API shows it.
type domainJSON struct {
	Domain     string           `json:"domain"`
	Status     string           `json:"status"`
	Reason     string           `json:"reason,omitempty"`
	Records    []domains.Record `json:"records"`
	URL        string           `json:"url"`
	CreatedAt  string           `json:"created_at"`
	CheckedAt  string           `json:"checked_at,omitempty"`
	VerifiedAt string           `json:"verified_at,omitempty"`
}

// domainDesk runs the custom domains' actions an account asks for, from
// the API and from the pages: it holds the per-account limit of adds,
// removals and checks, and shows a domain as the API does.
type domainDesk struct {
	// svc adds, checks and removes custom domains.
	svc *domains.Service
	// actions limits the actions per account (domainActionsPerMinute).
	actions *ratelimit.Limiter
	// cfg gives the domains' site URLs.
	cfg *Config
}

// start begins an action of owner on its domains (domains.Service.Start,
// within domainActionsPerMinute): over a limit it returns the 429, with
// Retry-After set on e's response. The caller ends the check with the
// allowance's Done (nil when dns is false).
func (d *domainDesk) start(e *core.RequestEvent, owner string, dns bool) (*domains.Allowance, error) {
	a, err := d.svc.Start(d.actions, owner, dns)
	return a, apierr.RateRefusal(e.Response, err)
}

// answer is rec, a domain of the site slug, as the API shows it,
// with the records to create.
func (d *domainDesk) answer(e *core.RequestEvent, rec *domains.Domain, slug string) domainJSON {
	return domainJSON{
		Domain:     rec.Name(),
		Status:     rec.Status(),
		Reason:     rec.Reason(),
		Records:    d.svc.Records(e.Request.Context(), rec, slug),
		URL:        d.cfg.links().SiteHost(rec.Name()),
		CreatedAt:  timestamp(rec.Created()),
		CheckedAt:  optTimestamp(rec.Checked()),
		VerifiedAt: optTimestamp(rec.Verified()),
	}
}

// optTimestamp is timestamp, or "" for the zero time.
func optTimestamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return timestamp(t)
}
