package ui

import (
	"testing"
	"time"
)

func TestTimeLeft(t *testing.T) {
	for _, c := range []struct {
		minutes int
		want    string
	}{{0, "less than a minute"}, {5, "5 minutes"}, {60, "1 hour"}, {23*60 + 59, "23 hours"}, {3 * 24 * 60, "3 days"}} {
		if got := TimeLeft(time.Duration(c.minutes) * time.Minute); got != c.want {
			t.Errorf("TimeLeft(%d min) = %q, want %q", c.minutes, got, c.want)
		}
	}
}
