package forms

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"syscall"
	"time"
)

// Webhook target checks against server-side request forgery: a webhook URL
// may only reach public addresses, checked when the URL is registered and
// again, on the resolved address, at every connection.

// MaxWebhookURLLength is the longest webhook URL accepted.
const MaxWebhookURLLength = 2048

// webhookResolveTimeout bounds the DNS lookup of CheckURL.
const webhookResolveTimeout = 5 * time.Second

// nonPublicPrefixes are ranges that IsPublicIP refuses on top of the
// classes netip.Addr reports itself (loopback, private, link-local,
// multicast, unspecified).
var nonPublicPrefixes = mustPrefixes(
	// IPv4
	"0.0.0.0/8",       // "this network"
	"100.64.0.0/10",   // carrier-grade NAT
	"192.0.0.0/24",    // IETF protocol assignments
	"192.0.2.0/24",    // TEST-NET-1
	"198.18.0.0/15",   // benchmarking
	"198.51.100.0/24", // TEST-NET-2
	"203.0.113.0/24",  // TEST-NET-3
	"240.0.0.0/4",     // reserved, and the broadcast 255.255.255.255
	// IPv6 (inside 2000::/3, which is all that is allowed at all)
	"2001::/23",     // IETF protocol assignments, Teredo, benchmarking
	"2001:db8::/32", // documentation
	"3fff::/20",     // documentation
)

// Prefixes with special handling in IsPublicIP.
var (
	globalUnicast6 = netip.MustParsePrefix("2000::/3")
	nat64Prefix    = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour      = netip.MustParsePrefix("2002::/16")
)

func mustPrefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// IsPublicIP reports whether a is a globally reachable unicast address
// that a webhook may be sent to. It is false for unspecified, loopback,
// private (including fc00::/7 and the fd00:ec2::254 metadata address),
// link-local (including the 169.254.169.254 metadata address), CGNAT,
// multicast, broadcast, reserved, documentation and benchmarking
// addresses, for IPv6 outside 2000::/3, and for IPv4-mapped, NAT64
// (64:ff9b::/96) and 6to4 (2002::/16) addresses whose embedded IPv4
// address is not public.
func IsPublicIP(a netip.Addr) bool {
	if !a.IsValid() {
		return false
	}
	a = a.WithZone("").Unmap()
	if a.IsUnspecified() || a.IsLoopback() || a.IsPrivate() || a.IsMulticast() ||
		a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || a.IsInterfaceLocalMulticast() {
		return false
	}
	if a.Is6() {
		b := a.As16()
		switch {
		case nat64Prefix.Contains(a):
			return IsPublicIP(netip.AddrFrom4([4]byte(b[12:16])))
		case sixToFour.Contains(a):
			if !IsPublicIP(netip.AddrFrom4([4]byte(b[2:6]))) {
				return false
			}
		case !globalUnicast6.Contains(a):
			// ::/8 (IPv4-compatible and -translated forms among them),
			// 100::/64 discard, fec0::/10 site-local, 64:ff9b:1::/48
			// local NAT64 and everything else not allocated for global
			// unicast.
			return false
		}
	}
	for _, p := range nonPublicPrefixes {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// WebhookURLError is a webhook URL that is refused; Msg is a message for
// the user.
type WebhookURLError struct {
	Msg string
}

// Error returns the message.
func (e *WebhookURLError) Error() string { return e.Msg }

func urlErrorf(format string, args ...any) *WebhookURLError {
	return &WebhookURLError{Msg: fmt.Sprintf(format, args...)}
}

// WebhookGuard checks webhook targets and builds HTTP clients that cannot
// reach non-public addresses.
type WebhookGuard struct {
	// AllowPrivate allows loopback, private and other non-public targets
	// (--webhooks-allow-private: development, tests, internal receivers).
	AllowPrivate bool
	// Resolver resolves host names; nil uses net.DefaultResolver.
	Resolver *net.Resolver
}

func (g WebhookGuard) resolver() *net.Resolver {
	if g.Resolver != nil {
		return g.Resolver
	}
	return net.DefaultResolver
}

// CheckURL validates a webhook URL: at most MaxWebhookURLLength long,
// http or https, a host and no user info. The host must resolve (within
// 5 seconds; an IP literal is taken as is) and, unless AllowPrivate, every
// address it resolves to must be public. Refusals are *WebhookURLError
// with a message for the user; a cancelled ctx is returned as is.
func (g WebhookGuard) CheckURL(ctx context.Context, raw string) error {
	if raw == "" {
		return urlErrorf("webhook URL is required")
	}
	if len(raw) > MaxWebhookURLLength {
		return urlErrorf("webhook URL is too long (at most %d characters)", MaxWebhookURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return urlErrorf("webhook URL is not a valid URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return urlErrorf("webhook URL must use http or https")
	}
	if u.User != nil {
		return urlErrorf("webhook URL must not contain a user name or password")
	}
	host := u.Hostname()
	if host == "" || u.Opaque != "" {
		return urlErrorf("webhook URL must have a host")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return urlErrorf("webhook URL has an invalid port")
		}
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if !g.AllowPrivate && !IsPublicIP(ip) {
			return urlErrorf("webhook URL host is a private or reserved address (%s)", ip.WithZone(""))
		}
		return nil
	}

	rctx, cancel := context.WithTimeout(ctx, webhookResolveTimeout)
	defer cancel()
	addrs, err := g.resolver().LookupNetIP(rctx, "ip", host)
	if ctx.Err() != nil {
		return fmt.Errorf("resolve webhook host: %w", ctx.Err())
	}
	if err != nil || len(addrs) == 0 {
		return urlErrorf("webhook URL host does not resolve")
	}
	if g.AllowPrivate {
		return nil
	}
	for _, a := range addrs {
		if !IsPublicIP(a) {
			return urlErrorf("webhook URL host resolves to a private or reserved address (%s)", a.WithZone("").Unmap())
		}
	}
	return nil
}

// dialControl refuses connections to non-public addresses. It runs on the
// address actually dialled, after resolution, so a host name that resolves
// differently at delivery than when it was checked (DNS rebinding) still
// cannot reach a private address.
func (g WebhookGuard) dialControl(network, address string, _ syscall.RawConn) error {
	if g.AllowPrivate {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return urlErrorf("refusing to connect to unparsable address %q", address)
	}
	if !IsPublicIP(ap.Addr()) {
		return urlErrorf("refusing to connect to private or reserved address %s", ap.Addr().WithZone("").Unmap())
	}
	return nil
}

// HTTPClient returns a client for webhook deliveries: every connection is
// checked by address at connect time (unless AllowPrivate), no proxy is
// taken from the environment, redirects are not followed (a 3xx is
// returned as the response), and timeout bounds each whole request, with
// shorter bounds on the TLS handshake and the wait for response headers.
func (g WebhookGuard) HTTPClient(timeout time.Duration) *http.Client {
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	step := min(timeout, 10*time.Second)
	dialer := &net.Dialer{
		Timeout:   step,
		KeepAlive: 30 * time.Second,
		Resolver:  g.Resolver,
		Control:   g.dialControl,
	}
	transport := &http.Transport{
		Proxy:                  nil,
		DialContext:            dialer.DialContext,
		ForceAttemptHTTP2:      true,
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:    step,
		ResponseHeaderTimeout:  timeout,
		ExpectContinueTimeout:  time.Second,
		MaxIdleConns:           20,
		MaxIdleConnsPerHost:    2,
		IdleConnTimeout:        60 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
	return &http.Client{
		Transport: transport,
		Timeout:   timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}
