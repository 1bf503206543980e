package accounts

import (
	"fmt"
	"testing"
	"time"
)

// TestFlashStore checks the one-shot life of a page message: taken once,
// gone after its TTL, bounded per session and in all.
func TestFlashStore(t *testing.T) {
	now := time.Now()
	var s Flashes
	s.Add("a", Flash{Kind: "success", Text: "saved"}, now)
	if got := s.Take("b", now); got != nil {
		t.Fatalf("another session's take = %v, want nothing", got)
	}
	if got := s.Take("a", now); len(got) != 1 || got[0].Text != "saved" {
		t.Fatalf("take = %v, want the message", got)
	}
	if got := s.Take("a", now); got != nil {
		t.Fatalf("second take = %v, want nothing (a reload shows it no more)", got)
	}

	s.Add("a", Flash{Text: "old"}, now)
	if got := s.Take("a", now.Add(FlashTTL+time.Second)); got != nil {
		t.Fatalf("take after the TTL = %v, want nothing", got)
	}

	for i := range FlashMaxPerSession + 2 {
		s.Add("a", Flash{Text: fmt.Sprint(i)}, now)
	}
	got := s.Take("a", now)
	if len(got) != FlashMaxPerSession || got[len(got)-1].Text != fmt.Sprint(FlashMaxPerSession+1) {
		t.Fatalf("take = %v, want the last %d messages", got, FlashMaxPerSession)
	}

	for i := range FlashMaxSessions + 10 {
		s.Add(fmt.Sprint("s", i), Flash{Text: "x"}, now.Add(time.Duration(i)*time.Millisecond))
	}
	if n := s.Len(); n > FlashMaxSessions {
		t.Fatalf("store holds %d sessions, want at most %d", n, FlashMaxSessions)
	}
	if got := s.Take(fmt.Sprint("s", FlashMaxSessions+9), now.Add(time.Second)); len(got) != 1 {
		t.Fatalf("the newest session lost its message: %v", got)
	}
}
