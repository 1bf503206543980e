package ratelimit

import (
	"testing"
	"time"
)

// TestAllowN walks one limiter (3 a minute) through a timeline: events
// are allowed up to the limit, refused ones are not counted, each key has
// its own window from its first event (so a burst is refused across the
// minute's turn), weighed events and refunds count, and ended windows are
// forgotten.
func TestAllowN(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 22, 59, 58, 0, time.UTC) // 2 s before the minute turns
	l := New(3, time.Minute)
	steps := []struct {
		name      string
		key       string
		n         int
		at        time.Duration // after t0
		ok        bool
		retry     time.Duration
		refund    int // before the event
		remaining int // keys kept after the event
	}{
		{"first", "a", 1, 0, true, 0, 0, 1},
		{"second", "a", 1, time.Second, true, 0, 0, 1},
		{"third, past the clock's minute", "a", 1, 3 * time.Second, true, 0, 0, 1},
		{"fourth: over, whatever the clock's minute", "a", 1, 4 * time.Second, false, 56 * time.Second, 0, 1},
		{"refused ones are not counted, still over", "a", 1, 5 * time.Second, false, 55 * time.Second, 0, 1},
		{"another key has its own count", "b", 1, 5 * time.Second, true, 0, 0, 2},
		{"a refund makes room", "a", 1, 6 * time.Second, true, 0, 1, 2},
		{"a weighed event over the limit", "b", 3, 7 * time.Second, false, 58 * time.Second, 0, 2},
		{"a weighed event within it", "b", 2, 7 * time.Second, true, 0, 0, 2},
		{"a's window has ended", "a", 1, time.Minute, true, 0, 0, 2},
		{"b's window and a's second have ended: both forgotten", "c", 1, 2*time.Minute + 6*time.Second, true, 0, 0, 1},
	}
	for _, s := range steps {
		if s.refund > 0 {
			l.Refund(s.key, s.refund)
		}
		ok, retry := l.AllowN(s.key, s.n, t0.Add(s.at))
		if ok != s.ok || retry != s.retry {
			t.Fatalf("%s: ok %v retry %v, want %v %v", s.name, ok, retry, s.ok, s.retry)
		}
		if got := len(l.counts); got != s.remaining {
			t.Fatalf("%s: %d keys kept, want %d", s.name, got, s.remaining)
		}
	}
}

// TestUnlimited: a negative max allows everything.
func TestUnlimited(t *testing.T) {
	l := New(-1, time.Minute)
	for range 100 {
		if ok, _ := l.AllowN("k", 1<<30, time.Now()); !ok {
			t.Fatal("refused")
		}
	}
}

// TestRefundUnknownKey: refunding a key never seen, or more than it
// counted, leaves nothing negative.
func TestRefundUnknownKey(t *testing.T) {
	l := New(1, time.Minute)
	now := time.Now()
	l.Refund("nobody", 5)
	l.AllowN("k", 1, now)
	l.Refund("k", 5)
	if ok, _ := l.AllowN("k", 1, now); !ok {
		t.Fatal("refused after a refund")
	}
	if ok, _ := l.AllowN("k", 1, now); ok {
		t.Fatal("a refund of more than counted made room for two")
	}
}

// TestCount: Count reads a key's events in its window without counting
// one, and nothing once the window has ended.
func TestCount(t *testing.T) {
	l := New(3, time.Minute)
	t0 := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	if n := l.Count("k", t0); n != 0 {
		t.Fatalf("unseen key: %d", n)
	}
	l.AllowN("k", 2, t0)
	if n := l.Count("k", t0.Add(time.Second)); n != 2 {
		t.Fatalf("in the window: %d", n)
	}
	if n := l.Count("k", t0.Add(time.Minute)); n != 0 {
		t.Fatalf("after the window: %d", n)
	}
}

// TestCheck: Check and CheckN count as AllowN does, and a refusal is an
// *Error carrying the message and the wait, which RetryAfterSeconds
// rounds to whole seconds, never below one.
func TestCheck(t *testing.T) {
	l := New(2, time.Minute)
	if err := l.Check("a"); err != nil {
		t.Fatalf("first: %v", err)
	}
	if err := l.CheckN("a", 2, "too much"); err == nil {
		t.Fatal("an event over the limit was allowed")
	} else if e, ok := err.(*Error); !ok || e.Msg != "too much" || e.RetryAfter <= 0 || e.RetryAfter > time.Minute {
		t.Fatalf("refusal: %#v", err)
	} else if s := e.RetryAfterSeconds(); s < 59 || s > 60 {
		t.Fatalf("Retry-After %d s, want about 60", s)
	}
	if err := l.Check("a"); err != nil {
		t.Fatalf("a refused event was counted: %v", err)
	}
	err := l.Check("a")
	if e, ok := err.(*Error); !ok || e.Msg != "" || e.Error() == "" {
		t.Fatalf("third event: %#v, want a refusal with the common message", err)
	}
	for _, c := range []struct {
		wait time.Duration
		want int
	}{{0, 1}, {100 * time.Millisecond, 1}, {1499 * time.Millisecond, 1}, {1500 * time.Millisecond, 2}, {30 * time.Second, 30}} {
		if got := (&Error{RetryAfter: c.wait}).RetryAfterSeconds(); got != c.want {
			t.Errorf("RetryAfterSeconds of %s = %d, want %d", c.wait, got, c.want)
		}
	}
}

// TestSetLimit: a limit changed while in use applies to the next event:
// a lower max refuses a key already past it, a longer window keeps the
// key's window going from its start, and no limit (-1) allows all.
func TestSetLimit(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	l := New(3, time.Minute)
	for i := range 2 {
		if ok, _ := l.AllowN("a", 1, t0.Add(time.Duration(i)*time.Second)); !ok {
			t.Fatalf("event %d refused within the limit", i)
		}
	}
	l.SetLimit(2, time.Hour)
	if l.Max() != 2 {
		t.Fatalf("Max() = %d after SetLimit(2)", l.Max())
	}
	ok, retry := l.AllowN("a", 1, t0.Add(2*time.Second))
	if ok || retry != time.Hour-2*time.Second {
		t.Fatalf("third event after lowering to 2 an hour: ok %v retry %v", ok, retry)
	}
	if ok, _ := l.AllowN("a", 1, t0.Add(2*time.Minute)); ok {
		t.Fatal("the window ended after a minute though it is an hour now")
	}
	l.SetLimit(-1, time.Hour)
	if ok, _ := l.AllowN("a", 100, t0.Add(3*time.Minute)); !ok {
		t.Fatal("refused with no limit")
	}
}
