package hooks

import (
	"net/http"
	"strconv"
	"sync"
	"time"
)

// limiter is a fixed-window rate limiter keyed by any string (a client IP,
// a deployment id). It is safe for concurrent use and forgets windows that
// have ended.
type limiter struct {
	max    int
	window time.Duration

	mu        sync.Mutex
	counts    map[string]*windowCount
	lastSwept time.Time
}

type windowCount struct {
	start time.Time
	n     int
}

// newLimiter allows max events per key in each window. max < 0 allows all.
func newLimiter(max int, window time.Duration) *limiter {
	return &limiter{max: max, window: window, counts: map[string]*windowCount{}}
}

// allowN counts an event that weighs n (1 for a request; bytes, for
// instance) for key and reports whether it is within the limit; when it
// is not, retryAfter is the time until the window resets.
func (l *limiter) allowN(key string, n int) (ok bool, retryAfter time.Duration) {
	if l.max < 0 {
		return true, 0
	}
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.lastSwept) > l.window {
		for k, c := range l.counts {
			if now.Sub(c.start) >= l.window {
				delete(l.counts, k)
			}
		}
		l.lastSwept = now
	}
	c, found := l.counts[key]
	if !found || now.Sub(c.start) >= l.window {
		c = &windowCount{start: now}
		l.counts[key] = c
	}
	if c.n+n > l.max {
		return false, c.start.Add(l.window).Sub(now)
	}
	c.n += n
	return true, 0
}

// refund takes back n of key's events in the current window: an event
// that did not happen after all (a mail that could not be sent).
func (l *limiter) refund(key string, n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c, ok := l.counts[key]; ok {
		c.n = max(0, c.n-n)
	}
}

// check counts one event and returns the 429 error (with Retry-After set
// on w) when the limit is exceeded.
func (l *limiter) check(w http.ResponseWriter, key string) error {
	return l.checkN(w, key, 1, msgRateLimited)
}

// checkN is check for an event that weighs n, refused with msg.
func (l *limiter) checkN(w http.ResponseWriter, key string, n int, msg string) error {
	ok, wait := l.allowN(key, n)
	if ok {
		return nil
	}
	secs := int(wait.Round(time.Second) / time.Second)
	if secs < 1 {
		secs = 1
	}
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	return fail(http.StatusTooManyRequests, "%s", msg)
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
