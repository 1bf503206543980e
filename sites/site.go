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
	// Files is the live manifest.
	Files Manifest
}
