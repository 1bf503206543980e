// Package domains holds custom domains: which names a deployment may
// claim (Normalize, Rules.Check), the DNS records its owner creates
// (Records), the check that they are in place (Checker), the domains
// collection behind a typed record model (Domain, model.go) and its
// queries (query.go), the route table of the request path (Table), and
// the service the API, the pages and the job share (Service: add with
// the plan limits, check within the server's DNS budget, remove).
//
// Usage, as hooks binds it:
//
//	svc := domains.NewService(app, domains.Config{FreeLimit: 1, ProLimit: 10, SiteHost: siteHost})
//	a, err := svc.Reserve(time.Now()) // a *BudgetError: no room for a check
//	defer a.Done()
//	d, created, err := svc.Add(ctx, domains.AccountOf(user), domains.SiteOf(dep), "shop.example.com", a)
//
// Refusals are the package's errors (ErrTaken, ErrNotFound, *LimitError,
// Normalize's), never HTTP statuses: hooks maps them. It has no routes.
package domains

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"
)

// Collection is the name of the custom domains collection.
const Collection = "domains"

// Statuses of a custom domain.
const (
	// StatusPending waits for its DNS records; the job checks it again.
	StatusPending = "pending"
	// StatusVerified is proven and served.
	StatusVerified = "verified"
	// StatusFailed gave up; Reason says why.
	StatusFailed = "failed"
)

// ChallengeLabel is the label under the domain of the TXT record that
// proves its ownership: _sitedrop-challenge.<domain>.
const ChallengeLabel = "_sitedrop-challenge"

// MaxLength is the longest domain accepted, in ASCII (punycode) form: the
// DNS limit of 253, less the challenge label and its dot, so the TXT
// record's name still fits.
const MaxLength = 253 - len(ChallengeLabel) - 1

// Errors of Normalize and Rules.Check, each a message for people.
var (
	ErrEmpty     = errors.New("domain is required")
	ErrIP        = errors.New("an IP address is not a domain")
	ErrTooLong   = fmt.Errorf("domain is too long (at most %d characters)", MaxLength)
	ErrNotDomain = errors.New("not a valid domain name")
	ErrSuffix    = errors.New("a public suffix (such as com or co.uk) cannot be claimed, only a domain under it")
	ErrReserved  = errors.New("domains of this server cannot be added")
)

// profile converts names as browsers look them up (UTS 46, transitional
// processing off), and refuses what DNS would not carry.
var profile = idna.New(
	idna.MapForLookup(),
	idna.BidiRule(),
	idna.StrictDomainName(true),
	idna.ValidateLabels(true),
	idna.VerifyDNSLength(true),
	idna.Transitional(false),
)

// Normalize turns what a person typed into the domain as stored and
// matched against Host headers: lower-case ASCII, internationalised names
// in punycode, no trailing dot, no scheme or port allowed. It refuses IP
// addresses, names that are too long or malformed, single labels and
// public suffixes. The errors are the package's Err values.
func Normalize(raw string) (string, error) {
	s := strings.TrimSpace(raw)
	s = strings.TrimSuffix(s, ".")
	if s == "" {
		return "", ErrEmpty
	}
	if _, err := netip.ParseAddr(strings.Trim(s, "[]")); err == nil {
		return "", ErrIP
	}
	if !utf8.ValidString(s) {
		return "", ErrNotDomain // idna would turn the bad bytes into U+FFFD
	}
	ascii, err := profile.ToASCII(s)
	if err != nil {
		if len(s) > MaxLength {
			return "", ErrTooLong
		}
		return "", ErrNotDomain
	}
	ascii = strings.ToLower(ascii)
	if len(ascii) > MaxLength {
		return "", ErrTooLong
	}
	if _, err := netip.ParseAddr(ascii); err == nil {
		return "", ErrIP
	}
	labels := strings.Split(ascii, ".")
	if len(labels) < 2 {
		return "", ErrNotDomain
	}
	for _, l := range labels {
		if !validLabel(l) {
			return "", ErrNotDomain
		}
	}
	if allDigits(labels[len(labels)-1]) {
		return "", ErrNotDomain // no top-level domain is numeric (RFC 3696)
	}
	if again, err := profile.ToASCII(ascii); err != nil || again != ascii {
		return "", ErrNotDomain // a punycode label that does not decode to a valid name
	}
	if _, err := publicsuffix.EffectiveTLDPlusOne(ascii); err != nil {
		return "", ErrSuffix
	}
	return ascii, nil
}

// validLabel reports whether l is a host name label: letters, digits and
// inner hyphens, 1 to 63 characters (underscores are refused: no browser
// asks for such a host).
func validLabel(l string) bool {
	if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
		return false
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// allDigits reports whether l is made of ASCII digits only.
func allDigits(l string) bool {
	for i := 0; i < len(l); i++ {
		if l[i] < '0' || l[i] > '9' {
			return false
		}
	}
	return true
}

// IsApex reports whether domain (normalised) is a registrable domain, the
// apex of its zone (example.com, example.co.uk), where a CNAME cannot be.
func IsApex(domain string) bool {
	reg, err := publicsuffix.EffectiveTLDPlusOne(domain)
	return err == nil && reg == domain
}

// WWWApex returns the apex that www.<apex> stands for, when domain is one
// ("www.example.com" gives "example.com", true).
func WWWApex(domain string) (string, bool) {
	rest, ok := strings.CutPrefix(domain, "www.")
	return rest, ok && rest != "" && IsApex(rest)
}

// Rules are the server's own names, which no custom domain may take.
type Rules struct {
	// WebHost is --domain, SitesDomain --sites-domain (normalised).
	WebHost, SitesDomain string
}

// Check refuses domain (normalised) when it is, or lies under, the web
// host or the sites domain.
func (r Rules) Check(domain string) error {
	for _, own := range []string{r.WebHost, r.SitesDomain} {
		own = strings.ToLower(strings.TrimSuffix(own, "."))
		if own != "" && (domain == own || strings.HasSuffix(domain, "."+own)) {
			return ErrReserved
		}
	}
	return nil
}

// Record is one DNS record the owner of a domain creates.
type Record struct {
	Type  string `json:"type"`
	Name  string `json:"name"`
	Value string `json:"value"`
}

// ChallengeName is the name of domain's TXT record.
func ChallengeName(domain string) string { return ChallengeLabel + "." + domain }

// Records lists the records that make domain point at siteHost (the
// site's <slug>.<sites-domain>) and prove it: a CNAME to siteHost for a
// subdomain, or an A/AAAA record per server address for an apex (none
// when addrs is empty: the server does not know its own addresses), then
// the TXT record holding token.
func Records(domain, token, siteHost string, addrs []netip.Addr) []Record {
	var out []Record
	if IsApex(domain) {
		for _, a := range addrs {
			typ := "A"
			if a.Is6() && !a.Is4In6() {
				typ = "AAAA"
			}
			out = append(out, Record{Type: typ, Name: domain, Value: a.Unmap().String()})
		}
	} else {
		out = append(out, Record{Type: "CNAME", Name: domain, Value: siteHost})
	}
	return append(out, Record{Type: "TXT", Name: ChallengeName(domain), Value: token})
}
