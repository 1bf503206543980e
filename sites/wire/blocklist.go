package wire

// BlockRequest is the body of POST /admin/blocklist: what to block. Kind
// is content_hash (a file's sha256), redirect_target (a host or URL
// pattern of _redirects targets) or email_domain (no new account from
// it); Note says why (optional, at most 500 bytes).
type BlockRequest struct {
	Kind  *string `json:"kind"`
	Value *string `json:"value"`
	Note  *string `json:"note,omitempty"`
}

// Block is one entry of the blocklist, as the admin API answers it. Value
// is normalised (a lowercase hash, a host pattern, a domain).
type Block struct {
	ID    string `json:"id"`
	Kind  string `json:"kind"`
	Value string `json:"value"`
	Note  string `json:"note"`
	// CreatedBy is the e-mail of the superuser who added it ("" unknown).
	CreatedBy string `json:"created_by"`
	// CreatedAt is RFC 3339 in UTC.
	CreatedAt string `json:"created_at"`
}

// BlockList is the answer of GET /admin/blocklist, newest first.
type BlockList struct {
	Blocks []Block `json:"blocks"`
}
