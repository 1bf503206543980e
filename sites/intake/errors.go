package intake

import (
	"errors"
	"fmt"
	"time"

	"sitedrop/sites"
)

// The refusals of intake are domain errors: they say what is wrong with
// what a client sent, never which HTTP status answers it (hooks/errors.go
// maps them, with the contract's messages).

// ErrBusy refuses a request whose memory budget stays exhausted: nothing
// is wrong with it, and it may fit when the server is less busy.
var ErrBusy = errors.New("server busy: try again")

// RetryAfter is the time a client refused with ErrBusy or a
// *WorkBudgetError is told to wait.
const RetryAfter = 5 * time.Second

// ErrHTMLRequired refuses a deploy that sends neither html nor files.
var ErrHTMLRequired = errors.New("html is required")

// ErrBothContent refuses a deploy that sends both html and files.
var ErrBothContent = errors.New("provide either html or files, not both")

// TooLargeError refuses a body over its limit (Limit bytes).
type TooLargeError struct{ Limit int64 }

func (e *TooLargeError) Error() string {
	return "Request body too large: the limit is " + sites.FormatBytes(e.Limit)
}

// TooSlowError refuses a body that arrives slower than MinRate bytes a
// second on average after Grace.
type TooSlowError struct {
	Grace   time.Duration
	MinRate int64
}

func (e *TooSlowError) Error() string {
	return fmt.Sprintf("Request body too slow: after %s it must arrive at %s a second or more", e.Grace, sites.FormatBytes(e.MinRate))
}

// InvalidError refuses a request whose body or fields are malformed; Msg
// says what is wrong, for the client.
type InvalidError struct{ Msg string }

func (e *InvalidError) Error() string { return e.Msg }

// invalid is an *InvalidError of a formatted message.
func invalid(format string, args ...any) error {
	if len(args) > 0 {
		format = fmt.Sprintf(format, args...)
	}
	return &InvalidError{Msg: format}
}

// TooManyFilesError refuses a deploy of more files than Limit
// (--max-files).
type TooManyFilesError struct{ Limit int }

func (e *TooManyFilesError) Error() string {
	return fmt.Sprintf("Too many files: the limit is %d", e.Limit)
}

// SiteTooLargeError refuses a deploy whose files total more than Limit
// bytes: an anonymous one's (Anonymous: over --anon-storage-per-ip), or
// the contents a deploy names by sha256.
type SiteTooLargeError struct {
	Limit     int64
	Anonymous bool
}

func (e *SiteTooLargeError) Error() string {
	if e.Anonymous {
		return "Site too large for an anonymous deploy: the limit is " + sites.FormatBytes(e.Limit) + "; deploy with an API key"
	}
	return "Site too large: the files a deploy names may total " + sites.FormatBytes(e.Limit)
}

// WorkBudgetError refuses a deploy that ran past its work budget (Limit):
// nothing was deployed. See Work.
type WorkBudgetError struct{ Limit time.Duration }

func (e *WorkBudgetError) Error() string {
	return fmt.Sprintf("Deploy took too long: a deploy must be processed within %s, and nothing was deployed; try again, or deploy fewer or smaller files", e.Limit)
}

// Refusal tells whether err is one of intake's refusals of what a client
// sent (or of a busy server), as opposed to a failure of the server.
func Refusal(err error) bool {
	var (
		tl *TooLargeError
		ts *TooSlowError
		iv *InvalidError
		tm *TooManyFilesError
		st *SiteTooLargeError
		wb *WorkBudgetError
	)
	return errors.Is(err, ErrBusy) || errors.Is(err, ErrHTMLRequired) || errors.Is(err, ErrBothContent) ||
		errors.As(err, &tl) || errors.As(err, &ts) || errors.As(err, &iv) || errors.As(err, &tm) || errors.As(err, &st) || errors.As(err, &wb)
}
