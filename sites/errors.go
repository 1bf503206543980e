package sites

import "errors"

// Errors a client can cause. The API maps each to its status and message.
var (
	// ErrNotFound: no such deployment for this caller (also: expired, or
	// already claimed, for a claim).
	ErrNotFound = errors.New("deployment not found")
	// ErrSlugTaken: another live deployment has the slug.
	ErrSlugTaken = errors.New("slug already taken")
	// ErrSlugReserved: the slug is on the reserved list.
	ErrSlugReserved = errors.New("slug is reserved")
	// ErrSlotLimit: the owner's plan has no free deployment slot.
	ErrSlotLimit = errors.New("deployment limit reached")
	// ErrInvalidClaimToken: the claim token does not match.
	ErrInvalidClaimToken = errors.New("invalid claim token")
)

// ErrAliasNotFound: the deployment has no alias of that name.
var ErrAliasNotFound = errors.New("alias not found")

// FieldError refuses a value a client sent for one field: Field names it,
// Msg says what is wrong (and starts with the field's name).
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return e.Msg }
