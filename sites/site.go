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
	// Files is the live manifest (the preview's version's, for a preview).
	Files Manifest
}
