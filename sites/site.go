package sites

import (
	"context"
	"time"
)

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

// DeployedFiles returns the manifest and the blobs (with their
// precompressed variants) that a deploy of files stores, with no metadata
// applied: what a test or a tool needs to serve files as a deploy would.
func DeployedFiles(ctx context.Context, files []File) (Manifest, map[string][]byte, error) {
	return buildManifest(ctx, files, resolvedMeta{}, "", nil)
}
