package ui

import (
	"net/url"
	"strconv"
	"time"
)

// displayTime is how pages show a moment to people: short, unambiguous,
// always in UTC (the server does not know the reader's time zone).
const displayTime = "2 Jan 2006, 15:04 UTC"

// rfc3339 formats t for a <time datetime> attribute.
func rfc3339(t time.Time) string {
	return t.UTC().Format(time.RFC3339)
}

// humanTime formats t for reading.
func humanTime(t time.Time) string {
	return t.UTC().Format(displayTime)
}

// parseStamp parses an RFC 3339 timestamp as handed over by the server
// (with or without fractional seconds, or PocketBase's "2006-01-02 15:04:05.000Z").
func parseStamp(s string) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05.000Z07:00", "2006-01-02 15:04:05Z07:00"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// stampAttr is the datetime attribute for a server timestamp: normalised
// RFC 3339 when it parses, the raw text otherwise.
func stampAttr(s string) string {
	if t, ok := parseStamp(s); ok {
		return rfc3339(t)
	}
	return s
}

// stampText is the readable form of a server timestamp, or the raw text
// when it does not parse.
func stampText(s string) string {
	if t, ok := parseStamp(s); ok {
		return humanTime(t)
	}
	return s
}

// orSlug is a site's display name: its title, or its slug when untitled.
func orSlug(title, slug string) string {
	if title != "" {
		return title
	}
	return slug
}

// pathSeg escapes one path segment of a form action.
func pathSeg(s string) string {
	return url.PathEscape(s)
}

// itoa is strconv.Itoa, short for templates.
func itoa(n int) string {
	return strconv.Itoa(n)
}

// KeyLabel names a key for people (screen readers, messages): its name
// and prefix, or its prefix.
func KeyLabel(k AccountKey) string {
	if k.Name != "" {
		return k.Name + " (" + k.Prefix + "…)"
	}
	return k.Prefix + "…"
}
