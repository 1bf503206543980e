package accounts

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseUserAgent(t *testing.T) {
	for _, c := range []struct{ ua, want string }{
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36", "Chrome on Windows"},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0", "Edge on Windows"},
		{"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 OPR/115.0.0.0", "Opera on macOS"},
		{"Mozilla/5.0 (Macintosh; Intel Mac OS X 10.15; rv:133.0) Gecko/20100101 Firefox/133.0", "Firefox on macOS"},
		{"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15", "Safari on macOS"},
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1", "Safari on iOS"},
		{"Mozilla/5.0 (iPad; CPU OS 17_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/131.0.6778.73 Mobile/15E148 Safari/604.1", "Chrome on iOS"},
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) FxiOS/133.0 Mobile/15E148 Safari/605.1.15", "Firefox on iOS"},
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) EdgiOS/131.0.2903.68 Mobile/15E148 Safari/605.1.15", "Edge on iOS"},
		{"Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.81 Mobile Safari/537.36", "Chrome on Android"},
		{"Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36 EdgA/131.0.0.0", "Edge on Android"},
		{"Mozilla/5.0 (Android 14; Mobile; rv:133.0) Gecko/133.0 Firefox/133.0", "Firefox on Android"},
		{"Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36", "Chrome on ChromeOS"},
		{"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36", "Chrome on Linux"},
		{"Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0", "Firefox on Linux"},
		{"Opera/9.80 (Windows NT 6.1; U; en) Presto/2.12.388 Version/12.18", "Opera on Windows"},
		{"curl/8.11.0", "curl"},
		{"sitedrop-cli", "sitedrop CLI"},
		{"Version/1.0", UnknownBrowser},
		{"Go-http-client/1.1", UnknownBrowser},
		{"", UnknownBrowser},
		{"Mozilla/5.0 (Windows NT 10.0)", UnknownBrowser + " on Windows"},
	} {
		if got := ParseUserAgent(c.ua).String(); got != c.want {
			t.Errorf("%q: %q, want %q", c.ua, got, c.want)
		}
	}
}

// TestParseUserAgentReadsOnlyTheCap: past MaxUserAgentLen bytes nothing is
// read, so a long header costs what a short one does.
func TestParseUserAgentReadsOnlyTheCap(t *testing.T) {
	pad := strings.Repeat("x", MaxUserAgentLen)
	if got := ParseUserAgent(pad + " Firefox/133.0 (Windows)").String(); got != UnknownBrowser {
		t.Fatalf("read past the cap: %q", got)
	}
	if got := ParseUserAgent("Firefox/133.0 (Windows)" + pad + strings.Repeat("Chrome/1 ", 1<<16)).String(); got != "Firefox on Windows" {
		t.Fatalf("a long header: %q", got)
	}
	// cut on a rune boundary
	s := truncateUserAgent(strings.Repeat("é", MaxUserAgentLen))
	if len(s) > MaxUserAgentLen || !utf8.ValidString(s) {
		t.Fatalf("truncated to %d bytes, valid %v", len(s), utf8.ValidString(s))
	}
}

// knownNames are every browser and OS name ParseUserAgent gives.
func knownNames() (browsers, oses []string) {
	browsers = []string{UnknownBrowser}
	for _, m := range browserMarks {
		browsers = append(browsers, m.name)
	}
	oses = []string{""}
	for _, m := range osMarks {
		oses = append(oses, m.name)
	}
	return browsers, oses
}

// FuzzParseUserAgent: any header gives a known browser and OS, reading no
// further than MaxUserAgentLen bytes.
func FuzzParseUserAgent(f *testing.F) {
	for _, s := range []string{
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0",
		"Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1",
		"curl/8.11.0", "sitedrop-cli", "", "\xff\xfe", strings.Repeat("é", MaxUserAgentLen),
	} {
		f.Add(s)
	}
	browsers, oses := knownNames()
	f.Fuzz(func(t *testing.T, ua string) {
		c := ParseUserAgent(ua)
		if !slices.Contains(browsers, c.Browser) || !slices.Contains(oses, c.OS) {
			t.Fatalf("%q: unknown name %+v", ua, c)
		}
		if c.String() == "" {
			t.Fatalf("%q: no text", ua)
		}
		if c != ParseUserAgent(truncateUserAgent(ua)) {
			t.Fatalf("%q: read past the cap", ua)
		}
		if len(ua) >= MaxUserAgentLen+utf8.UTFMax && ParseUserAgent(ua+" Firefox/1 (Windows)") != c {
			t.Fatalf("%q: a suffix past the cap changed the answer", ua)
		}
	})
}

// BenchmarkParseUserAgent: a megabyte header costs what a short one does.
func BenchmarkParseUserAgent(b *testing.B) {
	for _, c := range []struct {
		name, ua string
	}{
		{"real", "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15"},
		{"1MiB", strings.Repeat("a", 1<<20)},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				ParseUserAgent(c.ua)
			}
		})
	}
}
