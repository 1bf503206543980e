package hooks

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"sitedrop/sites/ratelimit"
)

// limiter is a rate limiter keyed by any string (a client IP, a
// deployment id): sites/ratelimit's, for the routes that answer a refusal
// in their own way (a page's flash, PocketBase's 429) and so need it as
// the API's answer at once (check).
type limiter struct {
	*ratelimit.Limiter
}

// newLimiter allows max events per key in each window. max < 0 allows all.
func newLimiter(max int, window time.Duration) *limiter {
	return &limiter{ratelimit.New(max, window)}
}

// check counts one event and returns the 429 error (with Retry-After set
// on w) when the limit is exceeded.
func (l *limiter) check(w http.ResponseWriter, key string) error {
	return rateRefusal(w, l.Check(key))
}

// rateRefusal is err, the result of a limit's Check, as the API answers
// it: a refusal becomes the 429 *apiError, with its Retry-After set on w.
func rateRefusal(w http.ResponseWriter, err error) error {
	var re *ratelimit.Error
	if !errors.As(err, &re) {
		return err
	}
	ae := rateLimitAPIError(re)
	w.Header().Set("Retry-After", strconv.Itoa(ae.RetryAfter))
	return ae
}

// authLimits are the per-client-IP limits of the sign-in endpoints, as in
// the contract's rate-limit table.
type authLimits struct {
	session *limiter // POST /auth/session: 5 a minute
	otp     *limiter // POST /auth/otp: 3 a minute
	verify  *limiter // POST /auth/verify: 10 a minute
	login   *limiter // GET /auth/login: 30 a minute
	// otpPerAddress limits codes per e-mail address, whatever the client.
	otpPerAddress *limiter
}

func newAuthLimits() authLimits {
	return authLimits{
		session: newLimiter(5, time.Minute),
		otp:     newLimiter(3, time.Minute),
		verify:  newLimiter(10, time.Minute),
		login:   newLimiter(30, time.Minute),
		// 3 codes in 10 minutes: with 8 digits and 5 tries per code,
		// guessing stays hopeless however many clients join in.
		otpPerAddress: newLimiter(3, 10*time.Minute),
	}
}
