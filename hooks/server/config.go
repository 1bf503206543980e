package server

import (
	"io"
	"net"
	"time"

	"sitedrop/hooks/server/certs"
)

// Config holds the settings of `sitedrop serve`. They are flags of that
// command only (see BindServeFlags), but for the fields after Replica,
// which the serve command and tests set.
type Config struct {
	// HTTPAddr is the plain HTTP listen address. Without HTTPSAddr it
	// serves everything (default 127.0.0.1:8090); with HTTPSAddr it only
	// answers ACME HTTP-01 challenges and /api/health, and redirects the
	// rest to https (default :80; empty: no HTTP listener).
	HTTPAddr string
	// HTTPSAddr, when set, serves TLS with certificates obtained and
	// renewed through ACME (certmagic), but for the names TLSCert covers.
	HTTPSAddr string
	// Origins are the CORS origins of PocketBase's own API. Default "*".
	Origins []string
	// TLSCert and TLSKey, with HTTPSAddr, are the PEM files of a
	// certificate the operator brings (e.g. a wildcard for the sites
	// domain from their own DNS-01 tooling) and of its key: it is served
	// for the names it covers, which never reach ACME; other names get
	// theirs through ACME as without it. Read and checked at start (see
	// certs.LoadKeyPair); the files are then watched, and a renewed pair
	// written over them is served without a restart.
	TLSCert, TLSKey string
	// ACMECA is the ACME directory URL. Default: Let's Encrypt production.
	ACMECA string
	// ACMECARoot is a PEM file of root certificates to trust for the ACME
	// server's own TLS (a private CA). Default: the system roots.
	ACMECARoot string
	// ACMEEmail is the ACME account's contact address (expiry notices).
	ACMEEmail string
	// DNSProvider names the DNS provider (see certs.RegisterDNSProvider) used
	// to obtain one wildcard certificate for the sites domain through
	// DNS-01. Empty: one certificate per live site, on demand.
	DNSProvider string
	// DNSResolvers are the DNS servers (host:port) asked when finding the
	// zone of a DNS-01 record and checking its propagation. Default: the
	// system's, and the zone's authoritative servers.
	DNSResolvers []string
	// NewCertsPerHour bounds the new certificates obtained on demand in
	// an hour (renewals and certificates already stored do not count).
	// Anonymous sites may take at most half of them (rounded down), so
	// owners' sites and custom domains always have the other half.
	// Default 20; 0: none; negative: no limit.
	NewCertsPerHour int
	// ShutdownTimeout bounds how long a SIGTERM waits for in-flight
	// requests and uploads. Default 30s; 0: no wait.
	ShutdownTimeout time.Duration
	// MaxConnsPerIP caps the open connections of one client address (an
	// IPv6 /64) on the listeners; a connection over it is closed at once.
	// Connections from TrustedProxies are not counted. Default 256; 0 or
	// negative: no cap.
	MaxConnsPerIP int

	// Replica serves the sites published to an S3 --store, with no
	// database (see the serve command).
	Replica bool
	// Primary is the primary's URL (--primary, with Replica only): the
	// replica holds a long poll to it and learns of a change at once,
	// reading the store every 15 s only while it does (see
	// sites/replica). "": the replica polls the store every 2 s.
	Primary string
	// MetricsAddr, when set, is where Prometheus metrics are served, at
	// /metrics, on a listener of their own (see hooks/server/metrics):
	// never on the main listener. Default: off.
	MetricsAddr string

	// DisableTLSALPN leaves only HTTP-01 (and DNS-01) to certmagic; tests
	// use it to exercise the plain HTTP listener's challenges. Not a flag.
	DisableTLSALPN bool
	// HeaderTimeout and IdleTimeout, when set, replace the listeners'
	// header and keep-alive timeouts (tests use short ones). Not flags.
	HeaderTimeout, IdleTimeout time.Duration
	// OnSend, when set, is told of each write of the main listener's
	// connections (tests count the writes of a response). Not a flag.
	OnSend func(c net.Conn, n int)

	// Banner, when set, receives the start banner (the serve command
	// sets its output).
	Banner io.Writer
	// Logs, when set, receives certificate events (the serve command
	// sets its error output); nil: os.Stderr (certs.Config.LogOutput).
	Logs io.Writer
}

// DefaultConfig returns the serve command's documented defaults; its
// flags show them.
func DefaultConfig() Config {
	return Config{
		ACMECA:          certs.ProductionCA,
		Origins:         []string{"*"},
		NewCertsPerHour: 20,
		ShutdownTimeout: 30 * time.Second,
		MaxConnsPerIP:   DefaultMaxConnsPerIP,
	}
}
