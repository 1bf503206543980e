package server

import (
	"net/http"
	"time"

	"sitedrop/hooks/server/metrics"
	"sitedrop/sites/serve"
)

// SiteH2 returns the HTTP/2 server of the main listener's connections
// whose TLS server name is a site host (see IsSiteHost): the listener
// hands it such a connection, handshaken with ALPN "h2", through its
// ServeConn, and every other connection to net/http. It answers each
// request to a site host through the front door (Wrap: the same metrics,
// panic recovery and site server as net/http's requests), and any other
// host 421 Misdirected Request (counted as unknown), which has the
// browser retry on a connection of its own. idle is the keep-alive
// timeout (0: IdleTimeout). Call its Shutdown beside the main server's,
// and its Close to stop at once.
func (f *Front) SiteH2(idle time.Duration) *serve.H2Server {
	if idle <= 0 {
		idle = IdleTimeout
	}
	misdirected := http.Handler(http.HandlerFunc(serve.Misdirected))
	if m := f.Metrics; m != nil {
		misdirected = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			m.Measure(w, r, func(w http.ResponseWriter, r *http.Request) metrics.HostClass {
				serve.Misdirected(w, r)
				return metrics.Unknown
			})
		})
	}
	return serve.NewH2Server(serve.H2Options{
		SiteHost: f.IsSiteHost,
		// a site host never reaches Wrap's next: Route answers it
		Handler:     f.Wrap(misdirected),
		Misdirected: misdirected,
		Logger:      f.Logger,
		IdleTimeout: idle,
	})
}

// IsSiteHost reports whether host (a TLS server name, or a request's
// Host) is a site host: <slug>.<sites-domain> or one of its previews.
func (f *Front) IsSiteHost(host string) bool {
	_, ok := f.Hosts.SiteLabel(host)
	return ok
}
