// Package sites holds sitedrop's deployed sites: creating and serving
// them. Its pure rules live in slug.go (slug syntax, generation and the
// Host-to-slug mapping), paths.go (file paths, decoding and content
// types) and head.go (the head tags added to served HTML);
// protection.go holds what a protected site's gate needs (its password's
// hash, share link and per-site secret).
package sites

import (
	"crypto/rand"
	"math/big"
	"net/netip"
	"strings"
)

// ReservedSlugs are the slugs no deployment may use, because their host
// names are kept for the service itself. Administrators can reserve more;
// see IsReservedSlug.
var ReservedSlugs = []string{
	"www", "api", "admin", "app", "auth", "login", "claim",
	"dashboard", "mail", "static", "assets", "cdn", "docs", "status",
}

// SlugMinLen is the shortest valid slug, in bytes.
const SlugMinLen = 3

// SlugMaxLen is the longest valid slug, in bytes; it is the longest DNS label.
const SlugMaxLen = 63

// slugRule is the message of every slug validation error.
const slugRule = "slug must be 3 to 63 lowercase letters, words joined by single hyphens (e.g. my-site)"

// SlugError reports a slug that breaks the slug rule. Callers can detect it
// with errors.As to answer 400 with its message.
type SlugError struct {
	// Msg is the human-readable rule the slug broke.
	Msg string
}

// Error returns the rule the slug broke.
func (e *SlugError) Error() string { return e.Msg }

// ValidateSlug reports whether slug is a valid slug: lowercase ASCII letters
// in words joined by single hyphens (^[a-z]+(-[a-z]+)*$), SlugMinLen to
// SlugMaxLen bytes long. It returns nil or a *SlugError. It does not check
// whether the slug is reserved; see IsReservedSlug.
func ValidateSlug(slug string) error {
	if !validSlug(slug) {
		return &SlugError{Msg: slugRule}
	}
	return nil
}

// validSlug is the boolean form of ValidateSlug.
func validSlug(s string) bool {
	if len(s) < SlugMinLen || len(s) > SlugMaxLen {
		return false
	}
	prevHyphen := true // a leading hyphen is as bad as a doubled one
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 'a' && c <= 'z':
			prevHyphen = false
		case c == '-' && !prevHyphen:
			prevHyphen = true
		default:
			return false
		}
	}
	return !prevHyphen
}

// IsReservedSlug reports whether slug is one of ReservedSlugs or of extra
// (the slugs an administrator reserved). The comparison ignores case and
// surrounding white space on both sides.
func IsReservedSlug(slug string, extra []string) bool {
	s := strings.ToLower(strings.TrimSpace(slug))
	for _, r := range ReservedSlugs {
		if s == r {
			return true
		}
	}
	for _, r := range extra {
		if s == strings.ToLower(strings.TrimSpace(r)) {
			return true
		}
	}
	return false
}

// GenerateSlug returns a random slug of three lowercase words joined by
// hyphens, an adjective and two nouns (e.g. brave-otter-river), chosen with
// crypto/rand. The result always passes ValidateSlug and is never one of
// ReservedSlugs. With over 30 million combinations collisions are rare, but
// callers must still retry when the slug is taken.
func GenerateSlug() string {
	return slugAdjectives[randIndex(len(slugAdjectives))] + "-" +
		slugNouns[randIndex(len(slugNouns))] + "-" +
		slugNouns[randIndex(len(slugNouns))]
}

// randIndex returns a uniformly random integer in [0, n) from crypto/rand.
func randIndex(n int) int {
	v, err := rand.Int(rand.Reader, big.NewInt(int64(n)))
	if err != nil {
		// crypto/rand does not fail on supported platforms; see rand.Read.
		panic("sites: crypto/rand failed: " + err.Error())
	}
	return int(v.Int64())
}

// SlugFromHost maps a request's Host to the slug of the site it names.
//
// A host that ValidHost refuses is never a site host: ("", false); the
// server refuses such requests before they reach a site or the API. A
// valid host is taken without its port and ASCII-lowercased; sitesDomain
// is compared the same way (and without a trailing dot), so case does not
// matter. When host is exactly <label>.<sitesDomain> and label is a valid
// slug, it returns (label, true). When host ends in "."+sitesDomain but
// has more than one label before it, or a label that is not a valid slug,
// it returns ("", true): the request is for a site host and must never
// reach the API, but names no site. Any other host, including sitesDomain
// itself and IP literals, returns ("", false).
//
// A reserved label (e.g. www) is returned like any other valid slug; no
// deployment can have it, so looking it up finds nothing.
func SlugFromHost(host, sitesDomain string) (slug string, isSiteHost bool) {
	return HostSplit{sites: strings.TrimPrefix(hostName(sitesDomain), ".")}.Site(host)
}

// asciiLower lowercases ASCII letters only. Unlike strings.ToLower it never
// turns a non-ASCII character into an ASCII one (the Kelvin sign into k), so
// a look-alike host cannot name a site.
func asciiLower(s string) string {
	upper := false
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			upper = true
			break
		}
	}
	if !upper {
		return s // the usual case: no copy
	}
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + ('a' - 'A')
		}
	}
	return string(b)
}

// slugAdjectives is the pool of first words of generated slugs.
var slugAdjectives = [...]string{
	"able", "agile", "airy", "amazing", "amber", "ample", "apt", "arctic", "ashen", "azure",
	"balmy", "bashful", "blithe", "blue", "bold", "bouncy", "brainy", "brave", "breezy",
	"bright", "brisk", "broad", "bronze", "bubbly", "busy", "calm", "candid", "carefree",
	"cheeky", "cheery", "chipper", "civic", "classic", "clean", "clear", "clever", "cloudy",
	"cobalt", "comfy", "cool", "cosmic", "cozy", "crafty", "crimson", "crisp", "curly",
	"cyan", "dandy", "dapper", "daring", "dashing", "dazzling", "dear", "deep", "deft",
	"devoted", "dewy", "direct", "dreamy", "dusky", "dusty", "dynamic", "eager", "early",
	"earthy", "easy", "elated", "electric", "elegant", "emerald", "epic", "even", "exact",
	"fabled", "fair", "famous", "fancy", "fast", "fearless", "fertile", "festive", "fiery",
	"fine", "firm", "flashy", "fleet", "floral", "fluent", "fluffy", "fond", "frank",
	"free", "fresh", "frosty", "frozen", "full", "funny", "fuzzy", "gallant", "genial",
	"gentle", "giant", "gifted", "gilded", "glad", "glassy", "gleaming", "glossy",
	"glowing", "golden", "good", "graceful", "grand", "grateful", "great", "green", "handy",
	"happy", "hardy", "hazy", "hearty", "heroic", "hidden", "honest", "hopeful", "humble",
	"icy", "ideal", "indigo", "ivory", "jade", "jazzy", "jolly", "jovial", "joyful", "just",
	"keen", "khaki", "kind", "kindly", "kinetic", "large", "lavish", "lean", "lemon",
	"level", "light", "lilac", "lively", "lofty", "lone", "lovely", "loyal", "lucid",
	"lucky", "lunar", "lush", "lyrical", "magic", "majestic", "major", "mauve", "mellow",
	"merry", "mighty", "mild", "mindful", "minty", "misty", "modern", "modest", "mossy",
	"navy", "nifty", "nimble", "noble", "noted", "novel", "oaken", "ochre", "optimal",
	"orange", "orderly", "pale", "pastel", "patient", "peaceful", "pearly", "peppy",
	"perky", "pink", "placid", "plain", "playful", "plucky", "plush", "poised", "polite",
	"precise", "pretty", "prime", "proper", "proud", "pure", "purple", "quaint", "quick",
	"quiet", "quirky", "radiant", "rapid", "rare", "ready", "regal", "relaxed", "rich",
	"robust", "rocky", "rosy", "round", "royal", "ruby", "rugged", "rustic", "sandy",
	"savvy", "scarlet", "scenic", "secret", "sepia", "serene", "sharp", "shiny", "shy",
	"silent", "silky", "silver", "simple", "sincere", "sleek", "smart", "smoky", "smooth",
	"snappy", "snowy", "snug", "sociable", "soft", "solar", "solid", "sonic", "sound",
	"sparkly", "speedy", "spicy", "spotless", "springy", "spry", "stable", "starry",
	"steady", "stellar", "still", "stoic", "stormy", "strong", "sturdy", "sublime",
	"sunlit", "sunny", "super", "sweet", "swift", "tactful", "tall", "tame", "tawny",
	"teal", "tender", "thrifty", "tidy", "timely", "tiny", "tranquil", "trendy", "tropical",
	"true", "trusty", "umber", "unique", "upbeat", "urban", "useful", "vast", "vibrant",
	"vital", "vivid", "vocal", "warm", "wavy", "white", "whole", "wild", "windy", "wintry",
	"wise", "witty", "wooden", "woody", "yellow", "young", "zany", "zesty", "zippy",
}

// slugNouns is the pool of second and third words of generated slugs.
var slugNouns = [...]string{
	"acorn", "almond", "amulet", "anchor", "anvil", "apple", "apricot", "arch", "arrow",
	"aspen", "atlas", "aurora", "autumn", "badge", "badger", "ballad", "bamboo", "banjo",
	"barn", "basin", "bay", "beach", "beacon", "bear", "beaver", "bee", "beetle", "berry",
	"birch", "bird", "bison", "blaze", "bloom", "blossom", "boat", "bramble", "breeze",
	"bridge", "brook", "brush", "bubble", "bucket", "butte", "button", "cabin", "cactus",
	"camel", "canal", "candle", "canoe", "canyon", "cape", "caramel", "cargo", "castle",
	"cedar", "cello", "chalk", "cherry", "cliff", "cloud", "clover", "cocoa", "comet",
	"compass", "cookie", "copper", "cotton", "cove", "crane", "crater", "creek", "crest",
	"cricket", "crow", "crystal", "cupcake", "cypress", "daisy", "dawn", "deer", "delta",
	"desert", "dolphin", "dove", "dragon", "drum", "dune", "dynamo", "eagle", "echo",
	"ember", "falcon", "feather", "fern", "fiddle", "field", "fig", "finch", "firefly",
	"fjord", "flame", "flint", "flute", "forest", "fossil", "fox", "frog", "galaxy",
	"garden", "garnet", "gazelle", "geyser", "ginger", "glacier", "glade", "globe", "goose",
	"gopher", "granite", "grove", "guitar", "gull", "hammock", "harbor", "harp", "hawk",
	"hazel", "heath", "hedge", "helmet", "heron", "hill", "hive", "honey", "horizon",
	"igloo", "iris", "island", "ivy", "jaguar", "jasmine", "jay", "jelly", "jewel",
	"jigsaw", "juniper", "kayak", "kernel", "kestrel", "kettle", "kite", "kiwi", "koala",
	"ladder", "lagoon", "lake", "lantern", "lark", "lava", "leaf", "ledge", "lemur",
	"lichen", "lily", "lion", "llama", "locket", "lodge", "lotus", "lynx", "magnet",
	"magpie", "mallard", "mango", "maple", "marble", "marsh", "meadow", "meerkat", "melody",
	"mesa", "meteor", "mint", "mitten", "moon", "moose", "mosaic", "moth", "muffin",
	"nebula", "nectar", "nest", "newt", "nutmeg", "oak", "oasis", "ocean", "olive", "orbit",
	"orchid", "oriole", "osprey", "otter", "owl", "paddle", "panda", "panther", "papaya",
	"parrot", "peach", "peak", "pear", "pebble", "pecan", "pelican", "penguin", "pepper",
	"piano", "pillow", "pine", "pixel", "planet", "plaza", "plume", "pocket", "pond",
	"poppy", "prairie", "prism", "puffin", "pumpkin", "puzzle", "quail", "quartz", "quill",
	"rabbit", "radish", "rainbow", "rapids", "raven", "reed", "reef", "ribbon", "ridge",
	"ripple", "river", "robin", "rocket", "rose", "rover", "saddle", "sail", "salmon",
	"sapling", "savanna", "scarf", "seal", "sequoia", "shadow", "shell", "shore", "signal",
	"sky", "sloth", "snail", "sonnet", "spark", "sparrow", "sphinx", "spiral", "spring",
	"sprout", "spruce", "squid", "stamp", "star", "story", "stream", "summit", "sun",
	"sundial", "swan", "teapot", "thimble", "thistle", "thrush", "thunder", "tide", "tiger",
	"timber", "toucan", "tractor", "trail", "tree", "trout", "tulip", "tundra", "tunnel",
	"turtle", "umbrella", "valley", "violet", "volcano", "voyage", "waffle", "wagon",
	"walnut", "walrus", "wave", "whale", "willow", "wind", "window", "wizard", "wolf",
	"wren", "yak", "yarn", "yogurt", "zebra", "zenith", "zephyr", "zinnia",
}

// HostSplit tells site hosts from the web host. It normalises its
// domains once, so the per-request check (every request passes it) only
// normalises the request's host.
type HostSplit struct {
	web, sites string
	// www is "www." + web ("" without a web host): it redirects to the
	// web host, so it is never a site host either.
	www string
}

// NewHostSplit returns the split for a server whose web host is webDomain
// and whose sites live under sitesDomain.
func NewHostSplit(webDomain, sitesDomain string) HostSplit {
	s := HostSplit{web: hostName(webDomain), sites: strings.TrimPrefix(hostName(sitesDomain), ".")}
	if s.web != "" {
		s.www = "www." + s.web
	}
	return s
}

// Site is SlugFromHost for this server: the web host and www.<web host>
// are never site hosts, even when they lie under the sites domain
// (--domain web.example.com --sites-domain example.com, or the same
// domain for both).
func (s HostSplit) Site(host string) (slug string, isSiteHost bool) {
	if s.sites == "" || !ValidHost(host) || host[0] == '[' {
		return "", false // no sites domain, a malformed host, or an IPv6 literal
	}
	h := NormHost(host)
	if h == s.web || h == s.www {
		return "", false
	}
	label, ok := strings.CutSuffix(h, "."+s.sites)
	if !ok {
		return "", false
	}
	if !validSlug(label) {
		return "", true // nested labels, empty label, digits, punycode...
	}
	return label, true
}

// Domains returns the normalised web host and sites domain.
func (s HostSplit) Domains() (web, sites string) { return s.web, s.sites }

// SiteHost is the host serving the site of slug: <slug>.<sites domain>,
// lower case. The publisher names its documents by it and the custom
// domains' records point at it.
func (s HostSplit) SiteHost(slug string) string {
	return strings.ToLower(slug + "." + s.sites)
}

// IsWebHost reports whether host (with or without a port) is the web host.
func (s HostSplit) IsWebHost(host string) bool {
	return s.web != "" && NormHost(host) == s.web
}

// IsWWWWebHost reports whether host (with or without a port) is
// www.<web host>, which redirects to the web host.
func (s HostSplit) IsWWWWebHost(host string) bool {
	h := NormHost(host)
	return s.web != "" && strings.HasPrefix(h, "www.") && h[len("www."):] == s.web
}

// WebHostLabel returns the label the web host would have as a slug when it
// lies directly under the sites domain ("web" for web.example.com under
// example.com), so it can be reserved; "" otherwise.
func WebHostLabel(webDomain, sitesDomain string) string {
	label, ok := strings.CutSuffix(hostName(webDomain), "."+hostName(sitesDomain))
	if !ok || strings.Contains(label, ".") {
		return ""
	}
	return label
}

// ValidHost reports whether host, a request's Host header, is well formed:
// a DNS name, an IPv4 address or a bracketed IPv6 literal (no zone), each
// with an optional numeric port (1 to 5 digits, at most 65535). A DNS name
// is at most 253 bytes of dot-separated labels of 1 to 63 ASCII letters,
// digits, hyphens and underscores (as container and service names have),
// neither starting nor ending with a hyphen: no empty label, so no
// trailing dot. An IPv4 address is such a name. It makes no copy: every
// request passes it.
func ValidHost(host string) bool {
	if host == "" {
		return false
	}
	if host[0] == '[' {
		end := strings.IndexByte(host, ']')
		if end < 0 || !validPort(host[end+1:]) {
			return false
		}
		lit := host[1:end]
		if strings.IndexByte(lit, '%') >= 0 {
			return false // a zone names an interface of the client's machine
		}
		a, err := netip.ParseAddr(lit)
		return err == nil && a.Is6()
	}
	name := host
	if i := strings.IndexByte(host, ':'); i >= 0 {
		if !validPort(host[i:]) {
			return false
		}
		name = host[:i]
	}
	return validDNSName(name)
}

// validPort reports whether p is empty or a colon and a port number.
func validPort(p string) bool {
	if p == "" {
		return true
	}
	if len(p) < 2 || len(p) > 6 || p[0] != ':' {
		return false
	}
	n := 0
	for i := 1; i < len(p); i++ {
		c := p[i]
		if c < '0' || c > '9' {
			return false
		}
		n = n*10 + int(c-'0')
	}
	return n <= 65535
}

// validDNSName reports whether name is a DNS name of letter, digit,
// hyphen and underscore labels (see ValidHost).
func validDNSName(name string) bool {
	if len(name) == 0 || len(name) > 253 {
		return false
	}
	start := 0
	for i := 0; i <= len(name); i++ {
		if i < len(name) && name[i] != '.' {
			switch c := name[i]; {
			case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_':
			default:
				return false
			}
			continue
		}
		label := name[start:i]
		if len(label) == 0 || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		start = i + 1
	}
	return true
}

// hostName normalises a configured domain: trimmed, then as NormHost.
func hostName(domain string) string { return NormHost(strings.TrimSpace(domain)) }

// NormHost lowercases a request's host and strips a port (also after a
// bracketed IPv6 literal: "[::1]:80" is "[::1]") and a trailing dot.
// White space is kept, so a padded Host never matches a name.
func NormHost(host string) string {
	h := host
	if strings.HasPrefix(h, "[") {
		if i := strings.LastIndexByte(h, ']'); i >= 0 {
			h = h[:i+1]
		}
	} else if strings.Count(h, ":") == 1 {
		h = h[:strings.IndexByte(h, ':')]
	}
	return strings.TrimSuffix(asciiLower(h), ".")
}
