// Package server is sitedrop's front door: what stands between a
// connection and the code that answers it. It holds the client address
// behind trusted proxies, the listeners with their per-client connection
// caps and timeouts, and (in certs, under it) the TLS stack.
//
// It builds on sites (the host rules) and sites/serve (the site server's
// listener and answers), never on hooks: hooks builds the values this
// package needs once, at start, and hands them over.
//
//	proxies, err := server.ParseProxies(cfg.TrustedProxies)
//	...
//	ip := proxies.ClientIP(r)   // X-Forwarded-For believed from proxies only
//	key := proxies.RateKey(r)   // the IPv4 address, or the IPv6 /64
package server
