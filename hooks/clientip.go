package hooks

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// parseProxies reads --trusted-proxies: addresses or CIDR ranges.
func parseProxies(list []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
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

// clientIP is the address rate limits count a request against. The
// connection's address, unless it is a trusted proxy: then the rightmost
// X-Forwarded-For entry that is not a trusted proxy itself (entries to its
// left were written by the client and prove nothing).
func (sd *sitedrop) clientIP(r *http.Request) string {
	remote := remoteAddr(r)
	if !sd.trustedProxy(remote) {
		return remote.String()
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break
		}
		a = a.Unmap()
		if !sd.trustedProxy(a) {
			return a.String()
		}
	}
	return remote.String()
}

func (sd *sitedrop) trustedProxy(a netip.Addr) bool {
	for _, p := range sd.proxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

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

// rateKey is the client a per-IP rate limit counts: its IPv4 address, or
// its IPv6 /64 network (one subscriber usually holds a whole /64).
func (sd *sitedrop) rateKey(r *http.Request) string {
	a, err := netip.ParseAddr(sd.clientIP(r))
	if err != nil || a.Is4() {
		return sd.clientIP(r)
	}
	p, _ := a.Prefix(64)
	return p.String()
}
