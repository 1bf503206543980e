package wire

// UsageLimits are a plan's limits, beside what an account uses.
type UsageLimits struct {
	// Sites is how many sites the plan allows.
	Sites int `json:"sites"`
	// VersionsPerSite is how many versions of each site are kept.
	VersionsPerSite int `json:"versions_per_site"`
}

// Usage is what an account uses: the answer of GET /usage. StorageBytes
// counts each unique file (and precompressed variant) that its sites'
// kept versions hold once; PageViews and BytesServed are the last Days
// UTC days', from Since (YYYY-MM-DD) to today.
type Usage struct {
	Plan         string      `json:"plan"`
	Sites        int         `json:"sites"`
	StorageBytes int64       `json:"storage_bytes"`
	PageViews    int64       `json:"page_views"`
	BytesServed  int64       `json:"bytes_served"`
	Since        string      `json:"since"`
	Days         int         `json:"days"`
	Limits       UsageLimits `json:"limits"`
}

// AccountUsage is one account of GET /admin/usage.
type AccountUsage struct {
	ID    string `json:"id"`
	Email string `json:"email"`
	Usage Usage  `json:"usage"`
}

// SiteUsage is one site of GET /admin/usage: what it served over the
// period. Owner is the owner's id ("" for an anonymous site).
type SiteUsage struct {
	ID          string `json:"id"`
	Slug        string `json:"slug"`
	Owner       string `json:"owner"`
	PageViews   int64  `json:"page_views"`
	BytesServed int64  `json:"bytes_served"`
}

// AdminUsage is the answer of GET /admin/usage?top=N: the N accounts and
// the N sites that served the most bytes over the last Days UTC days,
// from Since (YYYY-MM-DD), most first.
type AdminUsage struct {
	Since    string         `json:"since"`
	Days     int            `json:"days"`
	Accounts []AccountUsage `json:"accounts"`
	Sites    []SiteUsage    `json:"sites"`
}
