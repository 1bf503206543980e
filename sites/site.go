package sites

import "time"

// Site is what serving one deployment takes: its live manifest and the
// rules that decide whether and how it is served. The deploy service loads
// it (Service.LoadSite); the site server (sites/serve) prepares it.
type Site struct {
	ID        string
	Slug      string
	Status    string
	IsSPA     bool
	VersionID string
	// ExpiresAt is zero for a deployment that does not expire.
	ExpiresAt time.Time
	// Protection is nil for a public site; otherwise what the gate needs:
	// the password's hash, the share link switch and the per-site secret
	// (see Protection). A replica reading Site as JSON needs nothing else.
	Protection *Protection `json:"protection,omitempty"`
	// Preview is the label of a preview host ("v12" or "staging", see
	// ParsePreviewLabel) when Files is that version's manifest rather than
	// the live one; "" for the live site. The site server answers a
	// preview with X-Robots-Tag: noindex, a gate cookie of its own and
	// its views counted apart.
	Preview string `json:"preview,omitempty"`
	// Paused is set while the owner has paused the site: every host of
	// it (previews too) answers the paused page, 503.
	Paused bool `json:"paused,omitempty"`
	// TakenDown is the reason an administrator took the site down ("" when
	// not): every host of it (previews, custom domains, old slugs too)
	// answers the takedown page, 410, with the reason.
	TakenDown string `json:"taken_down,omitempty"`
	// AwaitingClaim is set while an anonymous site is held unserved
	// until claimed: every host of it answers the "awaiting claim" page.
	AwaitingClaim bool `json:"awaiting_claim,omitempty"`
	// MovedTo is set for the old slug of a renamed site (Slug is the old
	// one, Files empty): the slug the site has now, whose host the old
	// one redirects to (301, same path; a preview's to the same preview
	// of the new slug) until ExpiresAt.
	MovedTo string `json:"moved_to,omitempty"`
	// Files is the live manifest (the preview's version's, for a preview).
	Files Manifest
}
