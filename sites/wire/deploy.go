package wire

// DeployRef names a deployment: the answer of a claim (POST
// /deploy/claim), and the start of the other answers about one.
type DeployRef struct {
	ID   string `json:"id"`
	Slug string `json:"slug"`
	// URL is the site's address, https://<slug>.<sites domain>/.
	URL string `json:"url"`
}

// DeployAnswer is the answer of a deploy (POST /deploy) or an update
// (PUT /deploy/{id}): the deployment, the lines of its _redirects and
// _headers that are not applied (always a list, empty when all apply),
// and its quality report. An anonymous deploy's answer carries Claim too;
// a keyed one's has none (nil: its fields are left out).
type DeployAnswer struct {
	DeployRef
	*Claim
	// ShareURL is the share link of a protected site whose link is on:
	// its URL with ?_token=…; "" (left out) otherwise.
	ShareURL string    `json:"share_url,omitempty"`
	Warnings []Warning `json:"warnings"`
	Report   Report    `json:"report"`
}

// Claim is what an anonymous deploy's answer adds: the token that lets
// an account keep the deployment, the page that does it, and when the
// deployment expires unless claimed.
type Claim struct {
	ClaimToken string `json:"claim_token"`
	ClaimURL   string `json:"claim_url"`
	// ExpiresAt is RFC 3339 in UTC, e.g. 2026-11-22T04:41:52Z.
	ExpiresAt string `json:"expires_at"`
}

// DeployStatus is the answer of GET /deploy/{id}.
type DeployStatus struct {
	ID          string `json:"id"`
	Slug        string `json:"slug"`
	URL         string `json:"url"`
	Status      string `json:"status"`
	StorageType string `json:"storage_type"`
	IsSPA       bool   `json:"is_spa"`
	Title       string `json:"title"`
	// Description is null when the deployment has none.
	Description *string `json:"description"`
	Favicon     string  `json:"favicon"`
	// Protected tells whether visitors need a password or the share
	// link (never the secrets).
	Protected bool `json:"protected"`
	// CreatedAt and UpdatedAt are RFC 3339 in UTC.
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
}

// DeploymentList is the answer of GET /deploys: the caller's
// deployments, most recently updated first.
type DeploymentList struct {
	Deployments []DeploySummary `json:"deployments"`
}

// DeploySummary is one entry of a DeploymentList.
type DeploySummary struct {
	ID    string `json:"id"`
	Slug  string `json:"slug"`
	URL   string `json:"url"`
	Title string `json:"title"`
	// UpdatedAt is RFC 3339 in UTC.
	UpdatedAt string `json:"updated_at"`
}

// IDMessage is the answer of a delete: what was deleted, and a sentence
// that says so.
type IDMessage struct {
	ID      string `json:"id"`
	Message string `json:"message"`
}

// ClaimRequest is the body of POST /deploy/claim. Both fields are
// required; a pointer tells an absent (or null) field from an empty one.
type ClaimRequest struct {
	Slug       *string `json:"slug"`
	ClaimToken *string `json:"claim_token"`
}

// VersionList is the answer of GET /deploy/{id}/versions: the kept
// versions, newest first.
type VersionList struct {
	Versions []Version `json:"versions"`
}

// Version is one kept version of a deployment.
type Version struct {
	Version int `json:"version"`
	// CreatedAt is RFC 3339 in UTC.
	CreatedAt  string `json:"created_at"`
	FileCount  int    `json:"file_count"`
	TotalBytes int64  `json:"total_bytes"`
	// Live tells the version the site serves.
	Live bool `json:"live"`
}

// RollbackRequest is the body of POST /deploy/{id}/rollback: the kept
// version to make live (required: nil is absent or null).
type RollbackRequest struct {
	Version *int `json:"version"`
}

// Rollback is the answer of a rollback: the deployment and the version
// now live.
type Rollback struct {
	DeployRef
	Version int `json:"version"`
}

// MissingRequest is the body of POST /blobs/missing: contents named by
// their SHA-256 (hex). Hashes is required (nil is absent or null).
type MissingRequest struct {
	Hashes []string `json:"hashes"`
}

// Missing is the answer of POST /blobs/missing: which of the contents
// asked about the server lacks, in the order asked, each once.
type Missing struct {
	Missing []string `json:"missing"`
}
