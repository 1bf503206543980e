package migrations

// Rate limits of the superuser sign-in (PocketBase's own rate limiter,
// per client address and endpoint).
const (
	// SuperuserAuthTries is how many sign-in tries (password, OTP, MFA
	// step, password-reset confirmation) a client address gets per
	// SuperuserAuthWindow seconds.
	SuperuserAuthTries  = 5
	SuperuserAuthWindow = 60
	// SuperuserMailTries is how many mails (sign-in code, password
	// reset) a client address may ask for per SuperuserMailWindow seconds.
	SuperuserMailTries  = 3
	SuperuserMailWindow = 600
)
