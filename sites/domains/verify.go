package domains

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// resolvConf is where the system's resolvers are read from when a Checker
// has none.
const resolvConf = "/etc/resolv.conf"

// exchangeTimeout bounds each DNS exchange.
const exchangeTimeout = 5 * time.Second

// CheckError is a failed verification: Reason says, for people, which
// record is missing or wrong. Temporary is true when no resolver answered
// (the domain's records are unknown, not wrong).
type CheckError struct {
	Reason    string
	Temporary bool
}

func (e *CheckError) Error() string { return e.Reason }

func failf(format string, args ...any) *CheckError {
	return &CheckError{Reason: fmt.Sprintf(format, args...)}
}

// Checker looks up a domain's records, each exchange within
// exchangeTimeout.
type Checker struct {
	// Resolvers are the DNS servers (host:port) asked, in turn (the
	// --dns-resolvers flag). Default: the system's, from /etc/resolv.conf.
	Resolvers []string
	// Allow, when not nil, is asked before each DNS question is sent:
	// one it refuses is not sent, and the lookup fails with a temporary
	// *CheckError (the server's budget of questions is spent).
	Allow func() bool
}

// reasonBudget is the temporary failure of a lookup that Allow refused.
const reasonBudget = "this server has asked too many DNS questions this minute; the domain is checked again later"

// Verify checks that domain is proven and points at this server:
// _sitedrop-challenge.<domain> has a TXT record holding token, and domain
// has a CNAME to siteHost, or A/AAAA records that are all among addrs
// (the server's addresses; an apex cannot have a CNAME). A nil error is
// verified; any other is a *CheckError.
func (c *Checker) Verify(ctx context.Context, domain, token, siteHost string, addrs []netip.Addr) error {
	txts, err := c.lookup(ctx, ChallengeName(domain), dns.TypeTXT)
	if err != nil {
		return err
	}
	var found bool
	for _, rr := range txts {
		if t, ok := rr.(*dns.TXT); ok && strings.Join(t.Txt, "") == token {
			found = true
		}
	}
	if !found {
		if len(txts) == 0 {
			return failf("no TXT record at %s", ChallengeName(domain))
		}
		return failf("the TXT record at %s does not hold this domain's token", ChallengeName(domain))
	}
	cnames, err := c.lookup(ctx, domain, dns.TypeCNAME)
	if err != nil {
		return err
	}
	want := strings.ToLower(strings.TrimSuffix(siteHost, "."))
	var wrongCNAME *CheckError
	for _, rr := range cnames {
		target := strings.ToLower(strings.TrimSuffix(rr.(*dns.CNAME).Target, "."))
		if target == want {
			return nil
		}
		wrongCNAME = failf("%s is a CNAME to %s, not to %s", domain, target, want)
	}
	// no CNAME to the site host: its addresses must be the server's
	var got []netip.Addr
	for _, typ := range []uint16{dns.TypeA, dns.TypeAAAA} {
		rrs, err := c.lookup(ctx, domain, typ)
		if err != nil {
			return err
		}
		got = append(got, addresses(rrs)...)
	}
	switch {
	case wrongCNAME != nil && (len(got) == 0 || len(addrs) == 0):
		return wrongCNAME
	case len(got) == 0 && IsApex(domain):
		return failf("%s has no A or AAAA record", domain)
	case len(got) == 0:
		return failf("%s has no CNAME record (to %s)", domain, want)
	case len(addrs) == 0:
		return failf("%s is not a CNAME to %s", domain, want)
	}
	for _, a := range got {
		if !slices.Contains(addrs, a) {
			if wrongCNAME != nil {
				return wrongCNAME
			}
			return failf("%s points at %s, which is not this server (%s)", domain, a, joinAddrs(addrs))
		}
	}
	return nil
}

// LookupAddrs returns the A and AAAA addresses of host (the server's
// addresses when --public-ip is not set are those of the site host).
func (c *Checker) LookupAddrs(ctx context.Context, host string) ([]netip.Addr, error) {
	var out []netip.Addr
	for _, typ := range []uint16{dns.TypeA, dns.TypeAAAA} {
		rrs, err := c.lookup(ctx, host, typ)
		if err != nil {
			return out, err
		}
		out = append(out, addresses(rrs)...)
	}
	return out, nil
}

// maxCNAMEChain bounds the CNAMEs lookup follows from the name asked.
const maxCNAMEChain = 8

// lookup returns name's records of type typ: those of the answer owned by
// name itself or, when name is an alias, by the end of its CNAME chain
// (asking again for a target whose records the answer does not hold), up
// to maxCNAMEChain links; a chain that loops has none. A record owned by
// any other name is never returned, whatever a resolver sent. Asked for
// CNAME, it returns name's own CNAMEs. Owner names compare as FQDNs,
// whatever their case. No such name is no records; only when no resolver
// answers is it an error.
func (c *Checker) lookup(ctx context.Context, name string, typ uint16) ([]dns.RR, error) {
	owner := canonicalName(name)
	var answer []dns.RR
	fresh := false // answer is the reply to the question for owner
	seen := map[string]bool{}
	for {
		if !fresh && !owns(answer, owner) {
			a, err := c.exchange(ctx, owner, typ)
			if err != nil {
				return nil, err
			}
			answer, fresh = a, true
		}
		rrs, target := recordsAt(answer, owner, typ)
		if len(rrs) > 0 || target == "" {
			return rrs, nil
		}
		seen[owner] = true
		if seen[target] || len(seen) > maxCNAMEChain {
			return nil, nil
		}
		owner, fresh = target, false
	}
}

// canonicalName is name as owner names are compared: lower case, fully
// qualified.
func canonicalName(name string) string {
	return strings.ToLower(dns.Fqdn(name))
}

// owns reports whether rrs hold a record of owner (a canonicalName).
func owns(rrs []dns.RR, owner string) bool {
	for _, rr := range rrs {
		if canonicalName(rr.Header().Name) == owner {
			return true
		}
	}
	return false
}

// recordsAt returns the Internet-class records of type typ that owner (a
// canonicalName) owns in rrs and, when it owns none but a CNAME (and typ
// is not CNAME), the CNAME's target.
func recordsAt(rrs []dns.RR, owner string, typ uint16) (out []dns.RR, target string) {
	for _, rr := range rrs {
		h := rr.Header()
		if h.Class != dns.ClassINET || canonicalName(h.Name) != owner {
			continue
		}
		switch {
		case h.Rrtype == typ:
			out = append(out, rr)
		case h.Rrtype == dns.TypeCNAME && target == "":
			target = canonicalName(rr.(*dns.CNAME).Target)
		}
	}
	if len(out) > 0 {
		target = ""
	}
	return out, target
}

// exchange asks the resolvers in turn for name's records of type typ and
// returns the answer section as sent; no such name is no records. Only
// when no resolver answers is it an error.
func (c *Checker) exchange(ctx context.Context, name string, typ uint16) ([]dns.RR, error) {
	servers, err := c.servers()
	if err != nil {
		return nil, err
	}
	q := new(dns.Msg)
	q.SetQuestion(name, typ)
	q.RecursionDesired = true
	var errs []error
	for _, srv := range servers {
		for _, network := range []string{"udp", "tcp"} {
			if c.Allow != nil && !c.Allow() {
				return nil, &CheckError{Reason: reasonBudget, Temporary: true}
			}
			client := &dns.Client{Net: network, Timeout: exchangeTimeout}
			ectx, cancel := context.WithTimeout(ctx, exchangeTimeout)
			m, _, err := client.ExchangeContext(ectx, q, srv)
			cancel()
			if err != nil {
				errs = append(errs, fmt.Errorf("%s over %s: %w", srv, network, err))
				break // next server
			}
			if m.Truncated && network == "udp" {
				continue // again over TCP
			}
			switch m.Rcode {
			case dns.RcodeSuccess, dns.RcodeNameError:
				return m.Answer, nil
			}
			errs = append(errs, fmt.Errorf("%s: %s", srv, dns.RcodeToString[m.Rcode]))
			break
		}
	}
	return nil, &CheckError{
		Reason:    fmt.Sprintf("no DNS server answered for %s (%v)", strings.TrimSuffix(name, "."), errors.Join(errs...)),
		Temporary: true,
	}
}

// servers returns the resolvers to ask, with ports.
func (c *Checker) servers() ([]string, error) {
	list := c.Resolvers
	if len(list) == 0 {
		conf, err := dns.ClientConfigFromFile(resolvConf)
		if err != nil {
			return nil, &CheckError{Reason: "no DNS resolver configured: " + err.Error(), Temporary: true}
		}
		for _, s := range conf.Servers {
			list = append(list, net.JoinHostPort(s, conf.Port))
		}
	}
	out := make([]string, 0, len(list))
	for _, s := range list {
		if _, _, err := net.SplitHostPort(s); err != nil {
			s = net.JoinHostPort(strings.Trim(s, "[]"), "53")
		}
		out = append(out, s)
	}
	return out, nil
}

// addresses returns the addresses of the A and AAAA records in rrs.
func addresses(rrs []dns.RR) []netip.Addr {
	var out []netip.Addr
	for _, rr := range rrs {
		var ip net.IP
		switch r := rr.(type) {
		case *dns.A:
			ip = r.A
		case *dns.AAAA:
			ip = r.AAAA
		default:
			continue
		}
		if a, ok := netip.AddrFromSlice(ip); ok {
			out = append(out, a.Unmap())
		}
	}
	return out
}

func joinAddrs(addrs []netip.Addr) string {
	s := make([]string, len(addrs))
	for i, a := range addrs {
		s[i] = a.String()
	}
	return strings.Join(s, ", ")
}
