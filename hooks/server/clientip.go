package server

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// TrustedProxies are the reverse proxies whose X-Forwarded-For is
// believed (--trusted-proxies).
type TrustedProxies []netip.Prefix

// ParseProxies reads --trusted-proxies: addresses or CIDR ranges.
func ParseProxies(list []string) (TrustedProxies, error) {
	var out TrustedProxies
	for _, s := range list {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("trusted proxy %q is not an IP address or CIDR range", s)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

// ClientIP is the address rate limits count a request against. The
// connection's address, unless it is a trusted proxy: then the rightmost
// X-Forwarded-For entry that is not a trusted proxy itself (entries to its
// left were written by the client and prove nothing).
func (p TrustedProxies) ClientIP(r *http.Request) string {
	remote := remoteAddr(r)
	if !p.contains(remote) {
		return remote.String()
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break
		}
		a = a.Unmap()
		if !p.contains(a) {
			return a.String()
		}
	}
	return remote.String()
}

// RateKey is the client a per-IP rate limit counts: its IPv4 address
// (see ClientIP), or its IPv6 /64 network (one subscriber usually holds
// a whole /64).
func (p TrustedProxies) RateKey(r *http.Request) string {
	ip := p.ClientIP(r)
	a, err := netip.ParseAddr(ip)
	if err != nil || a.Is4() {
		return ip
	}
	prefix, _ := a.Prefix(64)
	return prefix.String()
}

// contains reports whether a is one of the proxies.
func (p TrustedProxies) contains(a netip.Addr) bool {
	for _, prefix := range p {
		if prefix.Contains(a) {
			return true
		}
	}
	return false
}

// remoteAddr is the connection's address, unmapped (0.0.0.0 when it does
// not parse).
func remoteAddr(r *http.Request) netip.Addr {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.IPv4Unspecified()
	}
	return a.Unmap()
}
