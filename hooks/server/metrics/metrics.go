// Package metrics is sitedrop's Prometheus metrics: one private registry
// (never the global one) with the Go and process collectors and every
// sitedrop_ metric, served at /metrics on a listener of its own
// (--metrics), never on a site host or the web host.
//
// The parts of sitedrop do not import Prometheus: each defines the small
// interface it counts through (serve.CacheCounter, store.ErrorCounter), or
// hands over an event (certificates) or a reading (a replica's last
// sync), and *Metrics implements them. Every label is of a small, fixed
// set (a host class, a status class, a result): never a slug, a host or
// a path. The counters of the hot path are built once, one per label
// value, so counting an answer is a few atomic adds and allocates
// nothing.
//
//	m := metrics.New()
//	srv := serve.NewServer(load, blobs, serve.ServerOptions{CacheCounter: m})
//	front := &server.Front{..., Metrics: m}          // requests, latency, bytes
//	ln, err := metrics.Listen("127.0.0.1:9180", m)   // GET /metrics
package metrics

import (
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"sitedrop/sites/serve"
	"sitedrop/sites/store"
)

// Path is where the metrics listener answers.
const Path = "/metrics"

// HostClass is which part of the server a request's host reached (see
// server.Front.Handle): the label host_class.
type HostClass uint8

// The host classes.
const (
	// Site is <slug>.<sites-domain> (a version host included).
	Site HostClass = iota
	// CustomDomain is a verified custom domain of a site.
	CustomDomain
	// Web is the web host: API, pages, dashboard, health.
	Web
	// Unknown is a host the server does not serve, or a malformed one.
	Unknown
	numHostClasses
)

var hostClassNames = [numHostClasses]string{"site", "custom_domain", "web", "unknown"}

// String is the class's label value.
func (c HostClass) String() string {
	if c >= numHostClasses {
		return "unknown"
	}
	return hostClassNames[c]
}

// statusClasses are the values of the label status_class, by status/100.
var statusClasses = [...]string{"1xx", "2xx", "3xx", "4xx", "5xx"}

// statusClass is the index in statusClasses of an HTTP status; one out
// of range counts as 5xx.
func statusClass(status int) int {
	i := status/100 - 1
	if i < 0 || i >= len(statusClasses) {
		return len(statusClasses) - 1
	}
	return i
}

// Deploy results: the label result of the deploy metrics.
const (
	DeployOK      = "ok"      // 2xx
	DeployRefused = "refused" // 4xx: the client's request was refused
	DeployFailed  = "failed"  // 5xx: the server failed
)

// DeployResult is the result of a deploy answered with status.
func DeployResult(status int) string {
	switch {
	case status >= 500:
		return DeployFailed
	case status >= 400:
		return DeployRefused
	}
	return DeployOK
}

// Webhook delivery results: the label result of
// sitedrop_webhook_deliveries_total.
const (
	WebhookDelivered = "delivered" // the receiver answered 2xx
	WebhookRetrying  = "retrying"  // an attempt failed; another is due
	WebhookFailed    = "failed"    // failed for good (attempts used up, or the webhook gone)
)

// Metrics holds every sitedrop_ metric on a private registry. Its methods
// are safe for concurrent use. Build it with New.
type Metrics struct {
	reg *prometheus.Registry
	// start is when New ran: a replica's lag before its first sync
	// counts from it.
	start time.Time

	requests [numHostClasses][len(statusClasses)]prometheus.Counter
	latency  [numHostClasses]prometheus.Observer
	bytes    [numHostClasses]prometheus.Counter

	cacheHit, cacheMiss prometheus.Counter

	deploys        *prometheus.CounterVec
	deployDuration *prometheus.HistogramVec
	slotWaiting    prometheus.Gauge
	slotWait       prometheus.Histogram

	webhooks    *prometheus.CounterVec
	emails      *prometheus.CounterVec
	certs       *prometheus.CounterVec
	storeErrors *prometheus.CounterVec
}

// latencyBuckets are the request latency histogram's buckets, in
// seconds: a cached page is answered in well under a millisecond, an API
// call in a few, a large download in seconds.
var latencyBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// deployBuckets are the deploy duration histogram's buckets, in seconds:
// from a small site to a large archive waiting for a slot.
var deployBuckets = []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300}

// New returns the metrics on a new registry, with the Go runtime's and
// the process's collectors.
func New() *Metrics {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := &Metrics{reg: reg, start: time.Now()}

	requests := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "sitedrop_http_requests_total",
		Help: "HTTP requests answered, by host class (site, custom_domain, web, unknown) and status class.",
	}, []string{"host_class", "status_class"})
	latency := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "sitedrop_http_request_duration_seconds",
		Help:    "Time from a request's header read to its handler's return, by host class.",
		Buckets: latencyBuckets,
	}, []string{"host_class"})
	bytes := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "sitedrop_http_response_bytes_total",
		Help: "Bytes of response bodies written, by host class.",
	}, []string{"host_class"})
	for c := range numHostClasses {
		for s, sc := range statusClasses {
			m.requests[c][s] = requests.WithLabelValues(c.String(), sc)
		}
		m.latency[c] = latency.WithLabelValues(c.String())
		m.bytes[c] = bytes.WithLabelValues(c.String())
	}

	cache := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "sitedrop_content_cache_requests_total",
		Help: "Lookups of small site files in the content cache (--content-cache), by result (hit, miss).",
	}, []string{"result"})
	m.cacheHit, m.cacheMiss = cache.WithLabelValues("hit"), cache.WithLabelValues("miss")

	m.deploys = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "sitedrop_deploys_total",
		Help: "Deploys (POST /deploy: create, PUT /deploy/{id}: update), by result: ok (2xx), refused (4xx), failed (5xx).",
	}, []string{"op", "result"})
	m.deployDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "sitedrop_deploy_duration_seconds",
		Help:    "Time a deploy took, from its request to its answer (body upload and slot wait included), by op and result.",
		Buckets: deployBuckets,
	}, []string{"op", "result"})
	m.slotWaiting = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "sitedrop_deploy_slot_waiting",
		Help: "Deploys waiting now for one of the --concurrent-deploys slots.",
	})
	m.slotWait = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "sitedrop_deploy_slot_wait_seconds",
		Help:    "Time a deploy waited for a slot (--concurrent-deploys).",
		Buckets: deployBuckets,
	})
	m.webhooks = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "sitedrop_webhook_deliveries_total",
		Help: "Webhook delivery attempts, by result: delivered, retrying (failed, another attempt is due), failed (for good).",
	}, []string{"result"})
	m.emails = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "sitedrop_emails_total",
		Help: "E-mails handed to the mailer (sign-in codes, notifications), by result (sent, failed).",
	}, []string{"result"})
	m.certs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "sitedrop_certificates_total",
		Help: "Certificate orders (--https), by result: obtained, renewed, failed.",
	}, []string{"result"})
	m.storeErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "sitedrop_store_errors_total",
		Help: "Failed operations of the blob store (not-found and unmodified answers are not errors), by backend (file, s3) and operation.",
	}, []string{"backend", "op"})
	// the label values known in advance start at 0, so that rate() and
	// increase() see the first one
	for _, r := range []string{DeployOK, DeployRefused, DeployFailed} {
		for _, op := range []string{"create", "update"} {
			m.deploys.WithLabelValues(op, r)
		}
	}
	for _, r := range []string{WebhookDelivered, WebhookRetrying, WebhookFailed} {
		m.webhooks.WithLabelValues(r)
	}
	for _, r := range []string{"sent", "failed"} {
		m.emails.WithLabelValues(r)
	}
	for _, r := range []string{"obtained", "renewed", "failed"} {
		m.certs.WithLabelValues(r)
	}
	reg.MustRegister(requests, latency, bytes, cache, m.deploys, m.deployDuration, m.slotWaiting, m.slotWait,
		m.webhooks, m.emails, m.certs, m.storeErrors)
	return m
}

// Registry is the metrics' registry, for a test or another exporter.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the metrics in Prometheus' text format (or OpenMetrics,
// when asked).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{EnableOpenMetrics: true})
}

// ContentCache counts a lookup in the site server's content cache
// (serve.CacheCounter).
func (m *Metrics) ContentCache(hit bool) {
	if hit {
		m.cacheHit.Inc()
	} else {
		m.cacheMiss.Inc()
	}
}

// StoreError counts a failed operation of a blob store
// (store.ErrorCounter).
func (m *Metrics) StoreError(backend, op string) {
	m.storeErrors.WithLabelValues(backend, op).Inc()
}

// Deploy counts a deploy answered with status after d; op is "create"
// (POST /deploy) or "update" (PUT /deploy/{id}).
func (m *Metrics) Deploy(op string, status int, d time.Duration) {
	r := DeployResult(status)
	m.deploys.WithLabelValues(op, r).Inc()
	m.deployDuration.WithLabelValues(op, r).Observe(d.Seconds())
}

// SlotWait counts a deploy that starts waiting for a deploy slot; done
// ends the wait (whether it got the slot or gave up).
func (m *Metrics) SlotWait() (done func()) {
	start := time.Now()
	m.slotWaiting.Inc()
	var once atomic.Bool
	return func() {
		if once.CompareAndSwap(false, true) {
			m.slotWaiting.Dec()
			m.slotWait.Observe(time.Since(start).Seconds())
		}
	}
}

// DeploySlots reports the deploy slots in use and their number
// (--concurrent-deploys) when scraped.
func (m *Metrics) DeploySlots(inUse func() int, total int) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "sitedrop_deploy_slots_in_use",
		Help: "Deploy slots taken now.",
	}, func() float64 { return float64(inUse()) }))
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "sitedrop_deploy_slots",
		Help: "Deploy slots (--concurrent-deploys).",
	}, func() float64 { return float64(total) }))
}

// WebhookDelivery counts a webhook delivery attempt by its result
// (WebhookDelivered, WebhookRetrying, WebhookFailed).
func (m *Metrics) WebhookDelivery(result string) {
	m.webhooks.WithLabelValues(result).Inc()
}

// Email counts an e-mail handed to the mailer; err is the mailer's.
func (m *Metrics) Email(err error) {
	if err != nil {
		m.emails.WithLabelValues("failed").Inc()
		return
	}
	m.emails.WithLabelValues("sent").Inc()
}

// CertificateEvent counts a certificate event of certmagic (its
// Config.OnEvent): cert_obtained (obtained or, with data["renewal"],
// renewed) and cert_failed; other events are not counted.
func (m *Metrics) CertificateEvent(event string, data map[string]any) {
	switch event {
	case "cert_obtained":
		if renewal, _ := data["renewal"].(bool); renewal {
			m.certs.WithLabelValues("renewed").Inc()
			return
		}
		m.certs.WithLabelValues("obtained").Inc()
	case "cert_failed":
		m.certs.WithLabelValues("failed").Inc()
	}
}

// Replica reports, when scraped, a replica's last successful sync with
// the store (lastSync; zero before the first) as a timestamp and as the
// time since then.
func (m *Metrics) Replica(lastSync func() time.Time) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "sitedrop_replica_last_sync_timestamp_seconds",
		Help: "When the replica last read the store's change feed (or listing) successfully, in Unix seconds; 0 before the first.",
	}, func() float64 {
		t := lastSync()
		if t.IsZero() {
			return 0
		}
		return float64(t.UnixNano()) / 1e9
	}))
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "sitedrop_replica_sync_lag_seconds",
		Help: "Seconds since the replica's last successful sync: how far behind the primary's publishes it may be (about the poll interval when healthy: 2 s, or 15 s while it follows the primary's long poll, --primary; the time since start before the first).",
	}, func() float64 {
		t := lastSync()
		if t.IsZero() {
			t = m.start
		}
		return time.Since(t).Seconds()
	}))
}

// ReplicaPush reports, when scraped, whether a replica started with
// --primary follows the primary's long poll (following): 1 while it
// does, 0 while it polls the store every 2 s instead.
func (m *Metrics) ReplicaPush(following func() bool) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "sitedrop_replica_push_connected",
		Help: "1 while the replica (--primary) follows the primary's long poll and learns of changes at once; 0 while it polls the store every 2 s instead.",
	}, func() float64 {
		if following() {
			return 1
		}
		return 0
	}))
}

// interface guards: the counting interfaces of the parts.
var (
	_ serve.CacheCounter = (*Metrics)(nil)
	_ store.ErrorCounter = (*Metrics)(nil)
)
