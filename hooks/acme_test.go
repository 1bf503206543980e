package hooks

// Real components on loopback for the TLS tests: an ACME CA (Pebble, in
// process) that validates challenges against sitedrop's own listeners, a
// DNS server that answers for the .test names, and a libdns provider
// that writes its TXT records into that DNS server.

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/letsencrypt/pebble/v2/ca"
	"github.com/letsencrypt/pebble/v2/db"
	"github.com/letsencrypt/pebble/v2/va"
	"github.com/letsencrypt/pebble/v2/wfe"
	"github.com/libdns/libdns"
	"github.com/miekg/dns"
)

// pebbleCA is an in-process ACME server.
type pebbleCA struct {
	// directory is the ACME directory URL.
	directory string
	// serverRoot is a PEM file with the ACME server's own TLS certificate
	// (for --acme-ca-root).
	serverRoot string
	// roots trusts the certificates the CA issues.
	roots *x509.CertPool
	// orders counts new-order requests.
	orders atomic.Int64
}

// startPebble runs Pebble on loopback. Its validation authority resolves
// names through dnsAddr and checks HTTP-01 on httpPort and TLS-ALPN-01 on
// tlsPort, that is on sitedrop's listeners.
func startPebble(t *testing.T, dnsAddr string, httpPort, tlsPort int) *pebbleCA {
	t.Helper()
	t.Setenv("PEBBLE_VA_NOSLEEP", "1")      // no random waits between validations
	t.Setenv("PEBBLE_WFE_NONCEREJECT", "0") // no random bad nonces: each order is one request
	// Pebble's log is shown when the test fails.
	var logBuf lockedBuffer
	logger := log.New(&logBuf, "pebble ", log.Lmicroseconds)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("Pebble's log:\n%s", logBuf.String())
		}
	})
	store := db.NewMemoryStore()
	authority := ca.New(logger, store, "", "ecdsa", 0, 1, map[string]ca.Profile{
		"default": {Description: "the default profile"},
	})
	validator := va.New(logger, httpPort, tlsPort, false, dnsAddr, store)
	front := wfe.New(logger, store, validator, authority, []string{"pebble.letsencrypt.org"}, false, false, 0, 0)

	p := &pebbleCA{}
	handler := front.Handler()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/order-plz" {
			p.orders.Add(1)
		}
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	p.directory = srv.URL + wfe.DirectoryPath

	p.serverRoot = filepath.Join(t.TempDir(), "acme-server.pem")
	serverPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(p.serverRoot, serverPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	p.roots = x509.NewCertPool()
	p.roots.AddCert(authority.GetRootCert(0).Cert)
	return p
}

// pebbleServe is a server on loopback with --https and --http, its
// certificates from a Pebble CA that validates against its listeners and
// resolves through a fake DNS server, started by startPebbleServe.
type pebbleServe struct {
	dns       *fakeDNS
	acme      *pebbleCA
	srv       *liveServer
	httpsAddr string
	httpsPort int
	httpAddr  string       // the plain HTTP listener
	client    *http.Client // pinned to httpsAddr, trusting Pebble's roots
	web       string       // the web host's https URL
}

// startPebbleServe starts Pebble, the fake DNS server and a server over
// a copy of the fixtures with args added to its TLS flags (and
// --dns-resolvers naming the fake DNS when resolve), and waits for the
// web host's certificate. It skips in -short mode.
func startPebbleServe(t *testing.T, resolve bool, args ...string) *pebbleServe {
	t.Helper()
	if testing.Short() {
		t.Skip("starts an ACME CA and a server")
	}
	dns := startFakeDNS(t)
	httpPort, httpsPort := freePort(t), freePort(t)
	httpsAddr, httpAddr := loopback(httpsPort), loopback(httpPort)
	acme := startPebble(t, dns.addr, httpPort, httpsPort)
	flags := []string{"--https", httpsAddr, "--http", httpAddr,
		"--acme-ca", acme.directory, "--acme-ca-root", acme.serverRoot}
	if resolve {
		flags = append(flags, "--dns-resolvers", dns.addr)
	}
	srv := startServe(t, copyData(t, templates.fixtures(t)), nil, httpsAddr, append(flags, args...)...)
	client := pinnedClient(httpsAddr, acme.roots)
	waitForCertificate(t, httpsAddr, "web.test", acme.roots)
	return &pebbleServe{dns: dns, acme: acme, srv: srv, httpsAddr: httpsAddr, httpsPort: httpsPort, httpAddr: httpAddr, client: client,
		web: "https://web.test" + portSuffix(httpsPort)}
}

// fakeDNS is an authoritative DNS server for the .test names: every name
// has the A record 127.0.0.1, every two-label name is a zone apex with an
// SOA, and TXT records are what a fakeDNSProvider has set.
type fakeDNS struct {
	addr string
	mu   sync.Mutex
	txt  map[string][]string // absolute name (with the final dot) -> values
	// set records every TXT record ever appended, for assertions.
	set []string
	// questions counts the questions asked.
	questions atomic.Int64
}

// startFakeDNS serves DNS on one loopback port over UDP and TCP (Pebble
// asks over TCP, certmagic over UDP).
func startFakeDNS(t *testing.T) *fakeDNS {
	t.Helper()
	d := &fakeDNS{txt: map[string][]string{}}
	var tcp net.Listener
	var udp net.PacketConn
	for range 20 { // find a port that is free for both protocols
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		if u, err := net.ListenPacket("udp", l.Addr().String()); err == nil {
			tcp, udp = l, u
			break
		}
		l.Close()
	}
	if tcp == nil {
		t.Fatal("no loopback port free for both TCP and UDP")
	}
	d.addr = tcp.Addr().String()
	for _, s := range []*dns.Server{{Listener: tcp, Handler: d}, {PacketConn: udp, Handler: d}} {
		go s.ActivateAndServe()
		t.Cleanup(func() { s.Shutdown() })
	}
	return d
}

func (d *fakeDNS) ServeDNS(w dns.ResponseWriter, req *dns.Msg) {
	d.questions.Add(int64(len(req.Question)))
	m := new(dns.Msg)
	m.SetReply(req)
	m.Authoritative = true
	for _, q := range req.Question {
		name := strings.ToLower(q.Name)
		if !strings.HasSuffix(name, ".test.") {
			m.Rcode = dns.RcodeNameError
			continue
		}
		hdr := dns.RR_Header{Name: q.Name, Class: dns.ClassINET, Rrtype: q.Qtype, Ttl: 1}
		switch q.Qtype {
		case dns.TypeA:
			m.Answer = append(m.Answer, &dns.A{Hdr: hdr, A: net.IPv4(127, 0, 0, 1)})
		case dns.TypeSOA:
			if strings.Count(name, ".") == 2 { // "sites.test."
				m.Answer = append(m.Answer, &dns.SOA{Hdr: hdr, Ns: "ns." + name, Mbox: "admin." + name,
					Serial: 1, Refresh: 60, Retry: 60, Expire: 60, Minttl: 1})
			}
		case dns.TypeTXT:
			d.mu.Lock()
			for _, v := range d.txt[name] {
				m.Answer = append(m.Answer, &dns.TXT{Hdr: hdr, Txt: []string{v}})
			}
			d.mu.Unlock()
		}
	}
	w.WriteMsg(m)
}

// txtNames lists the names TXT records were ever set for.
func (d *fakeDNS) txtNames() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.set...)
}

// fakeDNSProvider is a libdns provider (certmagic.DNSProvider) that writes
// to a fakeDNS.
type fakeDNSProvider struct{ dns *fakeDNS }

func (p *fakeDNSProvider) AppendRecords(_ context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	p.dns.mu.Lock()
	defer p.dns.mu.Unlock()
	for _, r := range recs {
		rr := r.RR()
		name := strings.ToLower(libdns.AbsoluteName(rr.Name, zone))
		if rr.Type == "TXT" {
			p.dns.txt[name] = append(p.dns.txt[name], rr.Data)
			p.dns.set = append(p.dns.set, name)
		}
	}
	return recs, nil
}

func (p *fakeDNSProvider) DeleteRecords(_ context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	p.dns.mu.Lock()
	defer p.dns.mu.Unlock()
	for _, r := range recs {
		rr := r.RR()
		name := strings.ToLower(libdns.AbsoluteName(rr.Name, zone))
		vals := p.dns.txt[name]
		for i, v := range vals {
			if v == rr.Data {
				p.dns.txt[name] = append(vals[:i:i], vals[i+1:]...)
				break
			}
		}
	}
	return recs, nil
}

// freePort returns a loopback port nothing listens on right now, taken
// outside the kernel's ephemeral range (ip_local_port_range): a port the
// kernel picks for a listener on port 0 (Pebble's, an httptest server's)
// or for an outgoing connection is never one freePort handed out. Taken
// from inside that range, a port freed by its probe went at once to the
// next listener on port 0: TestHTTPSOnDemand's --http port was Pebble's
// own (seen under -race). Ports are tried from a random start, so that
// test processes running side by side rarely try the same ones.
func freePort(t *testing.T) int {
	t.Helper()
	givenPorts.mu.Lock()
	defer givenPorts.mu.Unlock()
	lo, hi := portsOutsideEphemeral()
	start := lo + rand.IntN(hi-lo+1)
	for i := range hi - lo + 1 {
		port := lo + (start-lo+i)%(hi-lo+1)
		if givenPorts.seen[port] {
			continue
		}
		l, err := net.Listen("tcp", loopback(port))
		if err != nil {
			continue // taken
		}
		l.Close()
		givenPorts.seen[port] = true
		return port
	}
	t.Fatal("no free loopback port outside the ephemeral range")
	return 0
}

// portsOutsideEphemeral is the larger range of ports, above 10000, that
// the kernel's ephemeral range leaves out (Linux's 32768-60999 leaves
// 10000-32767), read from /proc/sys/net/ipv4/ip_local_port_range; the
// Linux default where it cannot be read.
func portsOutsideEphemeral() (lo, hi int) {
	eLo, eHi := 32768, 60999
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			x, errX := strconv.Atoi(f[0])
			y, errY := strconv.Atoi(f[1])
			if errX == nil && errY == nil && x <= y {
				eLo, eHi = x, y
			}
		}
	}
	below, above := eLo-1-10000, 65535-(eHi+1)
	if below >= above && below > 100 {
		return 10000, eLo - 1
	}
	if above > 100 {
		return eHi + 1, 65535
	}
	return 10000, 65535 // no room outside: any port, checked free
}

// givenPorts are the ports freePort has handed out in this test process,
// never handed out again: a test asking for two ports (--https and
// --http) once got one twice.
var givenPorts = struct {
	mu   sync.Mutex
	seen map[int]bool
}{seen: map[int]bool{}}

// lockedBuffer is a bytes.Buffer safe for concurrent writers.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// countingProxy forwards TCP connections from a loopback port to target
// and counts them: the CA's HTTP-01 validations pass through one, so a
// test can tell that they reached the plain HTTP listener.
func countingProxy(t *testing.T, target string) (port int, conns *atomic.Int64) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	conns = new(atomic.Int64)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() {
				defer c.Close()
				up, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer up.Close()
				go io.Copy(up, c)
				io.Copy(c, up)
			}()
		}
	}()
	return l.Addr().(*net.TCPAddr).Port, conns
}
