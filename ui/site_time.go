package ui

import (
	"strconv"
	"time"
)

// sinceText says how long ago t was, for people: "just now", "5 minutes
// ago", "3 hours ago", "2 days ago"; past a month the date itself. A
// moment in the future (clock skew, a retry time) reads "in 5 minutes".
func sinceText(t, now time.Time) string {
	d := now.Sub(t)
	if d < 0 {
		return "in " + span(-d)
	}
	if d < time.Minute {
		return "just now"
	}
	if d >= 30*24*time.Hour {
		return t.UTC().Format("2 Jan 2006")
	}
	return span(d) + " ago"
}

// span is a duration in its largest whole unit: "1 minute", "3 hours".
func span(d time.Duration) string {
	unit := func(n int64, name string) string {
		if n == 1 {
			return "1 " + name
		}
		return strconv.FormatInt(n, 10) + " " + name + "s"
	}
	switch {
	case d < time.Minute:
		return unit(max(int64(d/time.Second), 1), "second")
	case d < time.Hour:
		return unit(int64(d/time.Minute), "minute")
	case d < 24*time.Hour:
		return unit(int64(d/time.Hour), "hour")
	}
	return unit(int64(d/(24*time.Hour)), "day")
}

// stampSince is sinceText of a server timestamp (RFC 3339), or the raw
// text when it does not parse.
func stampSince(s string) string {
	if t, ok := parseStamp(s); ok {
		return sinceText(t, time.Now())
	}
	return s
}
