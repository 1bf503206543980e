package ui

import (
	"testing"
	"time"
)

func TestSinceText(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		ago  time.Duration
		want string
	}{
		{0, "just now"},
		{59 * time.Second, "just now"},
		{time.Minute, "1 minute ago"},
		{3*time.Hour + 59*time.Minute, "3 hours ago"},
		{25 * time.Hour, "1 day ago"},
		{29 * 24 * time.Hour, "29 days ago"},
		{40 * 24 * time.Hour, "15 Oct 2026"},
		{-90 * time.Second, "in 1 minute"},
		{-10 * time.Second, "in 10 seconds"},
	} {
		if got := sinceText(now.Add(-tc.ago), now); got != tc.want {
			t.Errorf("%v ago: %q, want %q", tc.ago, got, tc.want)
		}
	}
}
