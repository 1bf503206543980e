package accounts

import (
	"strings"
	"unicode/utf8"
)

// MaxUserAgentLen bounds the User-Agent a session keeps and the parser
// reads: real ones are a few hundred bytes, and the header is untrusted.
const MaxUserAgentLen = 512

// UnknownBrowser names a client whose User-Agent says nothing known.
const UnknownBrowser = "Unknown browser"

// Client is what a User-Agent says about the browser that signed in, for
// people: its name ("Firefox", "sitedrop CLI") and its operating system
// ("macOS"; "" when it does not say).
type Client struct {
	Browser string
	OS      string
}

// String is "Firefox on macOS", or the browser alone.
func (c Client) String() string {
	if c.OS == "" {
		return c.Browser
	}
	return c.Browser + " on " + c.OS
}

// browserMarks name browsers by a product token of their User-Agent, in
// the order they are tried: a browser built on another carries that
// one's tokens too (Edge and Opera say Chrome/, Chrome says Safari/), so
// the more specific come first.
var browserMarks = []struct{ mark, name string }{
	{"sitedrop-cli", "sitedrop CLI"}, // sites/client.UserAgent
	{"curl/", "curl"},
	{"edg/", "Edge"},
	{"edga/", "Edge"},
	{"edgios/", "Edge"},
	{"edge/", "Edge"},
	{"opr/", "Opera"},
	{"opt/", "Opera"},
	{"opera", "Opera"},
	{"firefox/", "Firefox"},
	{"fxios/", "Firefox"},
	{"crios/", "Chrome"},
	{"chrome/", "Chrome"},
	{"chromium/", "Chromium"},
	{"version/", "Safari"}, // Safari says Version/N … Safari/N
}

// osMarks name operating systems by a token of the User-Agent's comment,
// in the order they are tried (an iPad says "like Mac OS X", Android and
// ChromeOS say Linux).
var osMarks = []struct{ mark, name string }{
	{"windows", "Windows"},
	{"iphone", "iOS"},
	{"ipad", "iOS"},
	{"ipod", "iOS"},
	{"android", "Android"},
	{"cros", "ChromeOS"},
	{"mac os x", "macOS"},
	{"macintosh", "macOS"},
	{"linux", "Linux"},
	{"x11", "Linux"},
}

// ParseUserAgent names the browser and operating system of a User-Agent
// header. The header is untrusted: only its first MaxUserAgentLen bytes
// are read, and the work is a fixed number of substring searches over
// them (linear in that length). Nothing known is UnknownBrowser, no OS.
func ParseUserAgent(ua string) Client {
	ua = strings.ToLower(truncateUserAgent(ua))
	c := Client{Browser: UnknownBrowser}
	for _, m := range browserMarks {
		if strings.Contains(ua, m.mark) {
			c.Browser = m.name
			break
		}
	}
	if c.Browser == "Safari" && !strings.Contains(ua, "safari/") {
		c.Browser = UnknownBrowser // Version/ alone is no Safari
	}
	if c.Browser == "curl" || c.Browser == "sitedrop CLI" {
		return c // their tokens name no OS
	}
	for _, m := range osMarks {
		if strings.Contains(ua, m.mark) {
			c.OS = m.name
			break
		}
	}
	return c
}

// truncateUserAgent is ua cut to MaxUserAgentLen bytes, on a rune
// boundary, as a session keeps it.
func truncateUserAgent(ua string) string {
	if len(ua) <= MaxUserAgentLen {
		return ua
	}
	cut := MaxUserAgentLen
	for cut > 0 && !utf8.RuneStart(ua[cut]) {
		cut--
	}
	return ua[:cut]
}
