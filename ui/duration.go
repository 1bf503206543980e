package ui

import (
	"fmt"
	"strconv"
	"time"
)

// TimeLeft says a duration the way people do: "23 hours", "5 minutes".
func TimeLeft(d time.Duration) string {
	switch {
	case d <= time.Minute:
		return "less than a minute"
	case d < time.Hour:
		return Plural(int(d/time.Minute), "minute")
	case d < 48*time.Hour:
		return Plural(int(d/time.Hour), "hour")
	}
	return Plural(int(d/(24*time.Hour)), "day")
}

// Ago says how long before now t was, for people: "3 hours ago".
func Ago(now, t time.Time) string {
	d := now.Sub(t)
	if d < time.Minute {
		return "just now"
	}
	return TimeLeft(d) + " ago"
}

// Plural is n units: "1 file", "3 files" (the one helper for counts
// shown to people; unit's plural is unit+"s").
func Plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}

// SizeShort writes a size for people: 512 B, 12.3 KB, 4.5 MB, 2.0 GB,
// 1.5 TB (a month's bytes served reach them).
func SizeShort(n int64) string {
	switch {
	case n < 1000:
		return strconv.FormatInt(n, 10) + " B"
	case n < 1000*1000:
		return strconv.FormatFloat(float64(n)/1000, 'f', 1, 64) + " KB"
	case n < 1000*1000*1000:
		return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) + " MB"
	case n < 1000*1000*1000*1000:
		return strconv.FormatFloat(float64(n)/1e9, 'f', 1, 64) + " GB"
	}
	return strconv.FormatFloat(float64(n)/1e12, 'f', 1, 64) + " TB"
}
