// Package ratelimit counts events per key in fixed windows that start at
// each key's first event, as every limit of sitedrop does (the API's, the
// sign-in's, the protected sites' gate). A window is the key's own, never
// the clock's: a burst is refused for the rest of its window, however it
// falls on the minute.
package ratelimit

import (
	"sync"
	"time"
)

// Limiter allows Max events per key in each Window. It is safe for
// concurrent use, and forgets keys whose window has ended, so its memory
// follows the keys seen in the last window.
type Limiter struct {
	max    int
	window time.Duration

	mu        sync.Mutex
	counts    map[string]*count
	lastSwept time.Time
}

// count is one key's events in its window, which began at start.
type count struct {
	start time.Time
	n     int
}

// New allows max events per key in each window. max < 0 allows all.
func New(max int, window time.Duration) *Limiter {
	return &Limiter{max: max, window: window, counts: map[string]*count{}}
}

// AllowN counts an event that weighs n (1 for a request; bytes, for
// instance) for key at now and reports whether it is within the limit.
// A refused event is not counted; retryAfter is then the time until the
// key's window ends.
func (l *Limiter) AllowN(key string, n int, now time.Time) (ok bool, retryAfter time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.max < 0 {
		return true, 0
	}
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
		c = &count{start: now}
		l.counts[key] = c
	}
	if c.n+n > l.max {
		return false, c.start.Add(l.window).Sub(now)
	}
	c.n += n
	return true, 0
}

// Max is the events allowed per key in a window (< 0: all).
func (l *Limiter) Max() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.max
}

// SetLimit changes the limit while the limiter is in use (an
// administrator's change of a setting, applied without a restart): max
// events per key in each window from now on. The events already counted
// stay counted, and a key's window keeps its start: a lower max refuses
// at once a key already past it, a longer window ends later.
func (l *Limiter) SetLimit(max int, window time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.max, l.window = max, window
}

// Refund takes back n of key's events in its current window: an event
// that did not happen after all (a mail that could not be sent, an
// attempt another limit refused).
func (l *Limiter) Refund(key string, n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c, ok := l.counts[key]; ok {
		c.n = max(0, c.n-n)
	}
}

// Count is key's events in its window at now, without counting one: 0
// when key has none or its window has ended.
func (l *Limiter) Count(key string, now time.Time) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c, ok := l.counts[key]; ok && now.Sub(c.start) < l.window {
		return c.n
	}
	return 0
}

// Error is the refusal of a limit: RetryAfter is the time until the
// key's window ends, Msg what the client is told ("" for the limits'
// common message). The bindings answer it (a 429 with Retry-After).
type Error struct {
	RetryAfter time.Duration
	Msg        string
}

func (e *Error) Error() string {
	if e.Msg == "" {
		return "rate limit exceeded"
	}
	return e.Msg
}

// RetryAfterSeconds is RetryAfter in whole seconds, rounded, at least 1:
// a Retry-After header's value.
func (e *Error) RetryAfterSeconds() int {
	return max(1, int(e.RetryAfter.Round(time.Second)/time.Second))
}

// Check counts one event for key now: nil within the limit, an *Error
// beyond it (the event is then not counted).
func (l *Limiter) Check(key string) error {
	return l.CheckN(key, 1, "")
}

// CheckN is Check for an event that weighs n, refused with msg.
func (l *Limiter) CheckN(key string, n int, msg string) error {
	if ok, wait := l.AllowN(key, n, time.Now()); !ok {
		return &Error{RetryAfter: wait, Msg: msg}
	}
	return nil
}
