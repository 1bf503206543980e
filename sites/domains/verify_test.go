package domains_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/miekg/dns"

	"sitedrop/sites/domains"
)

// zoneServer is a DNS server on loopback answering from a table of
// records in zone-file form ("shop.example.com. 60 IN CNAME x.test."):
// the records of the name asked, of its type or CNAME (an authoritative
// server's answer: it does not follow the CNAME). A record written with a
// leading "!" is in every answer, whatever the name asked (a resolver
// that answers with records of other names).
type zoneServer struct {
	addr   string
	mu     sync.Mutex
	rrs    []dns.RR
	always []dns.RR
}

func startZone(t *testing.T, records ...string) *zoneServer {
	t.Helper()
	z := &zoneServer{}
	z.set(t, records...)
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	z.addr = pc.LocalAddr().String()
	srv := &dns.Server{PacketConn: pc, Handler: z}
	go srv.ActivateAndServe()
	t.Cleanup(func() { srv.Shutdown() })
	return z
}

func (z *zoneServer) set(t *testing.T, records ...string) {
	t.Helper()
	var rrs, always []dns.RR
	for _, s := range records {
		everywhere := strings.HasPrefix(s, "!")
		rr, err := dns.NewRR(strings.TrimPrefix(s, "!"))
		if err != nil {
			t.Fatal(err)
		}
		if everywhere {
			always = append(always, rr)
		} else {
			rrs = append(rrs, rr)
		}
	}
	z.mu.Lock()
	z.rrs, z.always = rrs, always
	z.mu.Unlock()
}

func (z *zoneServer) ServeDNS(w dns.ResponseWriter, req *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(req)
	z.mu.Lock()
	defer z.mu.Unlock()
	for _, q := range req.Question {
		for _, rr := range z.rrs {
			h := rr.Header()
			if strings.EqualFold(h.Name, q.Name) && (h.Rrtype == q.Qtype || h.Rrtype == dns.TypeCNAME) {
				m.Answer = append(m.Answer, rr)
			}
		}
		m.Answer = append(m.Answer, z.always...)
	}
	if len(m.Answer) == 0 {
		m.Rcode = dns.RcodeNameError
	}
	w.WriteMsg(m)
}

func TestVerify(t *testing.T) {
	t.Parallel()
	const token = "sitedrop-verify-abc"
	server := []netip.Addr{netip.MustParseAddr("192.0.2.10")}
	scenarios := []struct {
		name    string
		domain  string
		records []string
		addrs   []netip.Addr
		reason  string // "" verified
	}{
		{"ok cname", "shop.example.com", []string{
			`_sitedrop-challenge.shop.example.com. 60 IN TXT "` + token + `"`,
			`shop.example.com. 60 IN CNAME Alice.Sites.Test.`,
		}, nil, ""},
		{"ok apex", "example.com", []string{
			`_sitedrop-challenge.example.com. 60 IN TXT "other" "value"`,
			`_sitedrop-challenge.example.com. 60 IN TXT "` + token + `"`,
			`example.com. 60 IN A 192.0.2.10`,
		}, server, ""},
		{"ok subdomain with the server's address", "shop.example.com", []string{
			`_sitedrop-challenge.shop.example.com. 60 IN TXT "` + token + `"`,
			`shop.example.com. 60 IN A 192.0.2.10`,
		}, server, ""},
		{"no txt", "shop.example.com", []string{
			`shop.example.com. 60 IN CNAME alice.sites.test.`,
		}, nil, "no TXT record at _sitedrop-challenge.shop.example.com"},
		{"wrong txt", "shop.example.com", []string{
			`_sitedrop-challenge.shop.example.com. 60 IN TXT "sitedrop-verify-other"`,
			`shop.example.com. 60 IN CNAME alice.sites.test.`,
		}, nil, "the TXT record at _sitedrop-challenge.shop.example.com does not hold this domain's token"},
		{"wrong cname", "shop.example.com", []string{
			`_sitedrop-challenge.shop.example.com. 60 IN TXT "` + token + `"`,
			`shop.example.com. 60 IN CNAME bob.sites.test.`,
		}, server, "shop.example.com is a CNAME to bob.sites.test, not to alice.sites.test"},
		{"no cname", "shop.example.com", []string{
			`_sitedrop-challenge.shop.example.com. 60 IN TXT "` + token + `"`,
		}, nil, "shop.example.com has no CNAME record (to alice.sites.test)"},
		{"apex elsewhere", "example.com", []string{
			`_sitedrop-challenge.example.com. 60 IN TXT "` + token + `"`,
			`example.com. 60 IN A 192.0.2.10`,
			`example.com. 60 IN A 198.51.100.1`,
		}, server, "example.com points at 198.51.100.1, which is not this server (192.0.2.10)"},
		{"apex without address", "example.com", []string{
			`_sitedrop-challenge.example.com. 60 IN TXT "` + token + `"`,
		}, server, "example.com has no A or AAAA record"},
		{"names in any case", "shop.example.com", []string{
			`_SITEDROP-Challenge.Shop.Example.COM. 60 IN TXT "` + token + `"`,
			`SHOP.example.com. 60 IN CNAME alice.sites.test.`,
		}, nil, ""},
		{"the token's TXT at another name", "shop.example.com", []string{
			`!_sitedrop-challenge.evil.test. 60 IN TXT "` + token + `"`,
			`shop.example.com. 60 IN CNAME alice.sites.test.`,
		}, nil, "no TXT record at _sitedrop-challenge.shop.example.com"},
		{"a CNAME of another name", "shop.example.com", []string{
			`_sitedrop-challenge.shop.example.com. 60 IN TXT "` + token + `"`,
			`!other.example.com. 60 IN CNAME alice.sites.test.`,
		}, nil, "shop.example.com has no CNAME record (to alice.sites.test)"},
		{"the server's address at another name", "example.com", []string{
			`_sitedrop-challenge.example.com. 60 IN TXT "` + token + `"`,
			`!other.example.com. 60 IN A 192.0.2.10`,
		}, server, "example.com has no A or AAAA record"},
		{"a CNAME chain's records that are not on the chain", "shop.example.com", []string{
			`_sitedrop-challenge.shop.example.com. 60 IN TXT "` + token + `"`,
			`shop.example.com. 60 IN CNAME edge.cdn.test.`,
			`edge.cdn.test. 60 IN A 198.51.100.1`,
			`!elsewhere.test. 60 IN A 192.0.2.10`,
		}, server, "shop.example.com is a CNAME to edge.cdn.test, not to alice.sites.test"},
		{"the challenge delegated by a CNAME", "shop.example.com", []string{
			`_sitedrop-challenge.shop.example.com. 60 IN CNAME shop.challenges.dns.test.`,
			`shop.challenges.dns.test. 60 IN TXT "` + token + `"`,
			`shop.example.com. 60 IN CNAME alice.sites.test.`,
		}, nil, ""},
		{"a CNAME chain to the server's address", "shop.example.com", []string{
			`_sitedrop-challenge.shop.example.com. 60 IN TXT "` + token + `"`,
			`shop.example.com. 60 IN CNAME edge.cdn.test.`,
			`edge.cdn.test. 60 IN CNAME origin.cdn.test.`,
			`origin.cdn.test. 60 IN A 192.0.2.10`,
		}, server, ""},
		{"a CNAME loop", "shop.example.com", []string{
			`_sitedrop-challenge.shop.example.com. 60 IN TXT "` + token + `"`,
			`shop.example.com. 60 IN CNAME loop.cdn.test.`,
			`loop.cdn.test. 60 IN CNAME shop.example.com.`,
		}, server, "shop.example.com is a CNAME to loop.cdn.test, not to alice.sites.test"},
	}
	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			z := startZone(t, s.records...)
			c := &domains.Checker{Resolvers: []string{z.addr}}
			err := c.Verify(context.Background(), s.domain, token, "alice.sites.test", s.addrs)
			if s.reason == "" {
				if err != nil {
					t.Fatalf("Verify = %v, want verified", err)
				}
				return
			}
			var ce *domains.CheckError
			if !errors.As(err, &ce) || ce.Reason != s.reason || ce.Temporary {
				t.Fatalf("Verify = %#v, want reason %q", err, s.reason)
			}
		})
	}
}

// TestVerifyNoResolver: a resolver that does not answer is a temporary
// failure, not a wrong record.
func TestVerifyNoResolver(t *testing.T) {
	t.Parallel()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0") // never answers
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close() // TCP refused at once
	c := &domains.Checker{Resolvers: []string{ln.Addr().String()}}
	err = c.Verify(context.Background(), "shop.example.com", "t", "alice.sites.test", nil)
	var ce *domains.CheckError
	if !errors.As(err, &ce) || !ce.Temporary || !strings.Contains(ce.Reason, "no DNS server answered") {
		t.Fatalf("Verify = %#v", err)
	}
}

func TestLookupAddrs(t *testing.T) {
	t.Parallel()
	z := startZone(t, `alice.sites.test. 60 IN A 192.0.2.1`, `alice.sites.test. 60 IN AAAA 2001:db8::1`)
	got, err := (&domains.Checker{Resolvers: []string{z.addr}}).LookupAddrs(context.Background(), "alice.sites.test")
	if err != nil || len(got) != 2 || got[0].String() != "192.0.2.1" || got[1].String() != "2001:db8::1" {
		t.Fatalf("LookupAddrs = %v, %v", got, err)
	}
}

// TestVerifyAllow: a question Allow refuses is not sent, and the check
// fails for now (a temporary error), not for a wrong record.
func TestVerifyAllow(t *testing.T) {
	t.Parallel()
	z := startZone(t, `_sitedrop-challenge.shop.example.com. 60 IN TXT "tok"`, `shop.example.com. 60 IN CNAME alice.sites.test.`)
	questions := 0
	c := &domains.Checker{Resolvers: []string{z.addr}, Allow: func() bool { questions++; return questions <= 1 }}
	err := c.Verify(context.Background(), "shop.example.com", "tok", "alice.sites.test", nil)
	var ce *domains.CheckError
	if !errors.As(err, &ce) || !ce.Temporary || !strings.Contains(ce.Reason, "too many DNS questions") || questions != 2 {
		t.Fatalf("Verify = %#v after %d questions", err, questions)
	}
}
