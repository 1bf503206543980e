package hooks

import (
	"time"

	"sitedrop/sites/ratelimit"
)

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
