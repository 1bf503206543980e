package wire

// RenameRequest is the body of POST /deploy/{id}/rename. A pointer
// tells an absent (or null) slug from an empty one.
type RenameRequest struct {
	Slug *string `json:"slug"`
}

// Renamed is the answer of POST /deploy/{id}/rename: the deployment under
// its new slug, and the old slug, whose host redirects (301, same path)
// to the new one until RedirectUntil; then it is freed. A rename to the
// current slug changes nothing and leaves the previous fields out.
type Renamed struct {
	DeployRef
	PreviousSlug string `json:"previous_slug,omitempty"`
	PreviousURL  string `json:"previous_url,omitempty"`
	// RedirectUntil is RFC 3339 in UTC.
	RedirectUntil string `json:"redirect_until,omitempty"`
}

// PauseState is the answer of POST /deploy/{id}/pause and /resume: the
// deployment and whether it is paused now.
type PauseState struct {
	DeployRef
	Paused bool `json:"paused"`
}

// TakedownRequest is the body of POST /admin/deploy/{id}/takedown. A
// pointer tells an absent (or null) reason from an empty one.
type TakedownRequest struct {
	Reason *string `json:"reason"`
}

// TakedownState is the answer of POST /admin/deploy/{id}/takedown and
// /restore: the deployment and its takedown now. Reason, TakenDownAt
// and TakenDownBy are left out while it is not taken down.
type TakedownState struct {
	DeployRef
	TakenDown bool   `json:"taken_down"`
	Reason    string `json:"reason,omitempty"`
	// TakenDownAt is RFC 3339 in UTC.
	TakenDownAt string `json:"taken_down_at,omitempty"`
	// TakenDownBy is the e-mail of the superuser who took it down.
	TakenDownBy string `json:"taken_down_by,omitempty"`
}

// BanRequest is the body of POST /admin/users/{id}/ban. A pointer tells
// an absent (or null) reason from an empty one.
type BanRequest struct {
	Reason *string `json:"reason"`
}

// BanState is the answer of POST /admin/users/{id}/ban and /unban: the
// account and its ban now. Reason, BannedAt and BannedBy are left out
// while it is not banned.
type BanState struct {
	ID     string `json:"id"`
	Email  string `json:"email"`
	Banned bool   `json:"banned"`
	Reason string `json:"reason,omitempty"`
	// BannedAt is RFC 3339 in UTC.
	BannedAt string `json:"banned_at,omitempty"`
	// BannedBy is the e-mail of the superuser who banned the account.
	BannedBy string `json:"banned_by,omitempty"`
}
