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
	ShareURL string `json:"share_url,omitempty"`
	// Version is the number of the version the deploy made.
	Version int `json:"version"`
	// Draft tells a version saved as a draft: the site still serves
	// what it served.
	Draft bool `json:"draft"`
	// PreviewURL is the version's own address, v<N>--<slug>.<sites
	// domain>; left out when that host name would be too long.
	PreviewURL string `json:"preview_url,omitempty"`
	// AliasURL is the address of the alias the deploy set, when it set
	// one (and its host name is not too long).
	AliasURL string    `json:"alias_url,omitempty"`
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
	// AwaitingClaim tells a site this server keeps unserved until it is
	// claimed: its address answers an "awaiting claim" page (403) until
	// then. Left out when the site is served at once.
	AwaitingClaim bool `json:"awaiting_claim,omitempty"`
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
	// Paused tells a site its owner paused (POST /deploy/{id}/pause):
	// its hosts answer the paused page until it is resumed.
	Paused bool `json:"paused"`
	// TakenDown is the reason an administrator took the site down
	// (POST /admin/deploy/{id}/takedown), left out when it is not: its
	// hosts answer the takedown page (410) and it takes no redeploy,
	// rename, pause, resume or promote until restored.
	TakenDown string `json:"taken_down,omitempty"`
	// CreatedAt and UpdatedAt are RFC 3339 in UTC.
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
	// Version is the number of the live version; 0 (left out) when none
	// is live (a deployment created as a draft).
	Version int `json:"version,omitempty"`
	// PreviewURL is the live version's own address (see
	// DeployAnswer.PreviewURL).
	PreviewURL string `json:"preview_url,omitempty"`
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
	// Message is the deploy's message, "" for none.
	Message string `json:"message"`
	// PreviewURL is the version's own address (left out when its host
	// name would be too long).
	PreviewURL string `json:"preview_url,omitempty"`
	// Aliases are the names of the aliases that point at the version.
	Aliases []string `json:"aliases"`
}

// Promote is the answer of POST /deploy/{id}/versions/{version}/promote:
// the deployment, the version now live and its preview URL.
type Promote struct {
	DeployRef
	Version    int    `json:"version"`
	PreviewURL string `json:"preview_url,omitempty"`
}

// AliasList is the answer of GET /deploy/{id}/aliases: the deployment's
// aliases, by name.
type AliasList struct {
	Aliases []Alias `json:"aliases"`
}

// Alias is one alias of a deployment: its name, the version it points
// at and its address (left out when its host name would be too long).
type Alias struct {
	Name    string `json:"name"`
	Version int    `json:"version"`
	URL     string `json:"url,omitempty"`
}

// AliasDeleted is the answer of DELETE /deploy/{id}/aliases/{name}: the
// alias deleted, and a sentence that says so.
type AliasDeleted struct {
	Name    string `json:"name"`
	Message string `json:"message"`
}

// VersionFiles is the answer of GET /deploy/{id}/versions/{version}/files:
// the version's files, by path.
type VersionFiles struct {
	Version int           `json:"version"`
	Files   []VersionFile `json:"files"`
}

// VersionFile is one file of a version: its path, size in bytes and the
// SHA-256 (hex) of the bytes served.
type VersionFile struct {
	Path string `json:"path"`
	Size int64  `json:"size"`
	Hash string `json:"hash"`
}

// Diff is the answer of GET /deploy/{id}/diff?from=N&to=M: the files
// version M adds to version N, those it changes and those it removes,
// each list by path.
type Diff struct {
	From    int           `json:"from"`
	To      int           `json:"to"`
	Added   []DiffFile    `json:"added"`
	Changed []DiffChanged `json:"changed"`
	Removed []DiffFile    `json:"removed"`
}

// DiffFile is a file only one side of a Diff has: its path and size (in
// the version that has it).
type DiffFile struct {
	Path string `json:"path"`
	Size int64  `json:"size"`
}

// DiffChanged is a file whose content differs: its path and its size in
// each version.
type DiffChanged struct {
	Path     string `json:"path"`
	FromSize int64  `json:"from_size"`
	ToSize   int64  `json:"to_size"`
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
