// Package apierr is the shape of a refusal, as the API and the web pages
// answer it: a status and an exact message ({"error": Message} from the
// API, a flash or an error page from the pages), and the Retry-After of a
// limit. Which domain error becomes which answer is hooks/errors.go's
// mapping; this package holds what both sides of the web host build on,
// so that hooks/pages need not import hooks.
package apierr

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"sitedrop/sites/ratelimit"
)

// Messages of the API contract (the README's Errors section) that both
// the API and the pages give.
const (
	// MsgRateLimited is the 429 of a limit that says nothing more.
	MsgRateLimited = "Rate limit exceeded"
	// MsgRouteNotFound answers a path that nothing is at.
	MsgRouteNotFound = "Not found"
)

// Error is an error a handler returns to answer with a status and an
// exact message: {"error": Message}. RetryAfter, when set, is the
// answer's Retry-After in seconds: an error made away from the request's
// goroutine (a deploy's compression workers) carries it there, since only
// that goroutine may write the response's headers.
type Error struct {
	Status     int
	Message    string
	RetryAfter int
}

// Error is the message.
func (e *Error) Error() string { return e.Message }

// SetRetryAfter sets e's Retry-After, when it has one, on the response
// headers h; call it from the request's goroutine.
func (e *Error) SetRetryAfter(h http.Header) {
	if e.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
}

// Fail is the answer status with the message format (formatted with args
// when there are any).
func Fail(status int, format string, args ...any) *Error {
	if len(args) > 0 {
		format = fmt.Sprintf(format, args...)
	}
	return &Error{Status: status, Message: format}
}

// RateLimited is the 429 of a limit's refusal, with its message (the
// contract's by default) and Retry-After.
func RateLimited(re *ratelimit.Error) *Error {
	msg := re.Msg
	if msg == "" {
		msg = MsgRateLimited
	}
	return &Error{Status: http.StatusTooManyRequests, Message: msg, RetryAfter: re.RetryAfterSeconds()}
}

// RateRefusal is err, the result of a limit's Check, as the API answers
// it, at once: a refusal becomes the 429 *Error, with its Retry-After set
// on w. The routes that answer a refusal in their own way (a page's
// flash, PocketBase's 429) or share code with them use it; an API route
// returns the *ratelimit.Error as it is, for hooks/errors.go to answer.
func RateRefusal(w http.ResponseWriter, err error) error {
	var re *ratelimit.Error
	if !errors.As(err, &re) {
		return err
	}
	ae := RateLimited(re)
	w.Header().Set("Retry-After", strconv.Itoa(ae.RetryAfter))
	return ae
}

// Sentence ends an API message with a full stop for a flash, unless it
// has one.
func Sentence(msg string) string {
	if strings.HasSuffix(msg, ".") {
		return msg
	}
	return msg + "."
}
