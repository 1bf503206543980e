package hooks

import "net/http"

// rateKey is the client a per-IP rate limit counts (see
// server.TrustedProxies.RateKey).
func (sd *sitedrop) rateKey(r *http.Request) string {
	return sd.proxies.RateKey(r)
}
