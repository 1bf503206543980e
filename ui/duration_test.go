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

func TestSizeShort(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 B", 999: "999 B", 1000: "1.0 KB", 12345: "12.3 KB", 4_500_000: "4.5 MB",
		2_000_000_000: "2.0 GB", 1_500_000_000_000: "1.5 TB", 1 << 62: "4611686.0 TB",
	} {
		if got := SizeShort(n); got != want {
			t.Errorf("SizeShort(%d) = %q, want %q", n, got, want)
		}
	}
}
