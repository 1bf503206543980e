package hooks

import (
	"fmt"
	"testing"
	"time"

	"sitedrop/ui"
)

// TestFlashStore checks the one-shot life of a page message: taken once,
// gone after its TTL, bounded per session and in all.
func TestFlashStore(t *testing.T) {
	now := time.Now()
	var s flashStore
	s.add("a", ui.Flash{Kind: ui.FlashSuccess, Text: "saved"}, now)
	if got := s.take("b", now); got != nil {
		t.Fatalf("another session's take = %v, want nothing", got)
	}
	if got := s.take("a", now); len(got) != 1 || got[0].Text != "saved" {
		t.Fatalf("take = %v, want the message", got)
	}
	if got := s.take("a", now); got != nil {
		t.Fatalf("second take = %v, want nothing (a reload shows it no more)", got)
	}

	s.add("a", ui.Flash{Text: "old"}, now)
	if got := s.take("a", now.Add(flashTTL+time.Second)); got != nil {
		t.Fatalf("take after the TTL = %v, want nothing", got)
	}

	for i := range flashMaxPerSession + 2 {
		s.add("a", ui.Flash{Text: fmt.Sprint(i)}, now)
	}
	got := s.take("a", now)
	if len(got) != flashMaxPerSession || got[len(got)-1].Text != fmt.Sprint(flashMaxPerSession+1) {
		t.Fatalf("take = %v, want the last %d messages", got, flashMaxPerSession)
	}

	for i := range flashMaxSessions + 10 {
		s.add(fmt.Sprint("s", i), ui.Flash{Text: "x"}, now.Add(time.Duration(i)*time.Millisecond))
	}
	if n := len(s.m); n > flashMaxSessions {
		t.Fatalf("store holds %d sessions, want at most %d", n, flashMaxSessions)
	}
	if got := s.take(fmt.Sprint("s", flashMaxSessions+9), now.Add(time.Second)); len(got) != 1 {
		t.Fatalf("the newest session lost its message: %v", got)
	}
}
