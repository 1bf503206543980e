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
	// Files is the live manifest.
	Files Manifest
}
