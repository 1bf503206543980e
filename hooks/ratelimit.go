package hooks

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"sitedrop/sites/ratelimit"
)

// rateRefusal is err, the result of a limit's Check, as the API answers
// it, at once: a refusal becomes the 429 *apiError, with its Retry-After
// set on w. The routes that answer a refusal in their own way (a page's
// flash, PocketBase's 429) or share code with them use it; an API route
// returns the *ratelimit.Error as it is, for hooks/errors.go to answer.
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
	session *ratelimit.Limiter // POST /auth/session: 5 a minute
	otp     *ratelimit.Limiter // POST /auth/otp: 3 a minute
	verify  *ratelimit.Limiter // POST /auth/verify: 10 a minute
	login   *ratelimit.Limiter // GET /auth/login: 30 a minute
	// otpPerAddress limits codes per e-mail address, whatever the client.
	otpPerAddress *ratelimit.Limiter
}

func newAuthLimits() authLimits {
	return authLimits{
		session: ratelimit.New(5, time.Minute),
		otp:     ratelimit.New(3, time.Minute),
		verify:  ratelimit.New(10, time.Minute),
		login:   ratelimit.New(30, time.Minute),
		// 3 codes in 10 minutes: with 8 digits and 5 tries per code,
		// guessing stays hopeless however many clients join in.
		otpPerAddress: ratelimit.New(3, 10*time.Minute),
	}
}
