package hooks

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a-h/templ"
	"github.com/pocketbase/pocketbase/core"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"sitedrop/hooks/server"
	"sitedrop/hooks/server/metrics"
	"sitedrop/sites"
	"sitedrop/sites/forms"
	"sitedrop/sites/intake"
	"sitedrop/sites/store/s3store/s3test"
)

// scrapeMetrics GETs /metrics from the metrics listener at addr and
// parses it (Prometheus' text format).
func scrapeMetrics(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	res, err := http.Get("http://" + addr + metrics.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", metrics.Path, res.StatusCode)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(res.Body)
	if err != nil {
		t.Fatalf("parse the scrape: %v", err)
	}
	return fams
}

// metricValue is the value of the series of name with labels (a
// histogram's: its count), 0 when there is none; labels are "k=v" pairs.
func metricValue(fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	f := fams[name]
	if f == nil {
		return 0
	}
series:
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for _, kv := range labels {
			k, v, _ := strings.Cut(kv, "=")
			if have[k] != v {
				continue series
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		case m.Untyped != nil:
			return m.Untyped.GetValue()
		}
	}
	return 0
}

// listenerGet sends GET path with Host host to the listener at addr, asking
// for no compression (so the body read is the body sent).
func listenerGet(t *testing.T, addr, host, path string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+path, nil)
	req.Host = host
	req.Header.Set("Accept-Encoding", "identity")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(b)
}

// listenerDo sends method path with Host web.test, key and body to addr.
func listenerDo(t *testing.T, addr, method, path, key, body string) int {
	t.Helper()
	req, _ := http.NewRequest(method, "http://"+addr+path, strings.NewReader(body))
	req.Host = "web.test"
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode
}

// TestMetricsScrape serves with --metrics, sends site pages, a 404, an
// unknown host, a health check and deploys (one made, one refused), then
// scrapes /metrics and checks that each counter moved by exactly what was
// sent.
func TestMetricsScrape(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	addr, maddr := loopback(freePort(t)), loopback(freePort(t))
	startServe(t, copyData(t, templates.fixtures(t)), nil, addr, "--http", addr, "--metrics", maddr)
	before := scrapeMetrics(t, maddr)

	var siteBytes int
	for range 3 {
		code, body := listenerGet(t, addr, "alice-site.sites.test", "/")
		if code != http.StatusOK || !strings.Contains(body, "<h1>alice</h1>") {
			t.Fatalf("site page: %d %q", code, body)
		}
		siteBytes += len(body)
	}
	code, body := listenerGet(t, addr, "nope.sites.test", "/")
	if code != http.StatusNotFound {
		t.Fatalf("unknown site: %d", code)
	}
	siteBytes += len(body)
	if code, _ := listenerGet(t, addr, "evil.example", "/auth/login"); code != http.StatusMisdirectedRequest {
		t.Fatalf("unknown host: %d", code)
	}
	if code, _ := listenerGet(t, addr, "web.test", "/api/health"); code != http.StatusOK {
		t.Fatalf("health: %d", code)
	}
	if code := listenerDo(t, addr, http.MethodPost, "/deploy", keyPia, `{"html":"<h1>metrics</h1>"}`); code != http.StatusOK {
		t.Fatalf("deploy: %d", code)
	}
	if code := listenerDo(t, addr, http.MethodPut, "/deploy/"+idBobSite, keyAlice, `{"html":"<h1>not hers</h1>"}`); code != http.StatusNotFound {
		t.Fatalf("deploy to another's site: %d, want 404", code)
	}
	after := scrapeMetrics(t, maddr)

	delta := func(name string, labels ...string) float64 {
		return metricValue(after, name, labels...) - metricValue(before, name, labels...)
	}
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"sitedrop_http_requests_total", []string{"host_class=site", "status_class=2xx"}, 3},
		{"sitedrop_http_requests_total", []string{"host_class=site", "status_class=4xx"}, 1},
		{"sitedrop_http_requests_total", []string{"host_class=unknown", "status_class=4xx"}, 1},
		{"sitedrop_http_requests_total", []string{"host_class=web", "status_class=2xx"}, 2}, // health, deploy
		{"sitedrop_http_requests_total", []string{"host_class=web", "status_class=4xx"}, 1}, // the refused deploy
		{"sitedrop_http_requests_total", []string{"host_class=custom_domain", "status_class=2xx"}, 0},
		{"sitedrop_http_request_duration_seconds", []string{"host_class=site"}, 4},
		{"sitedrop_http_request_duration_seconds", []string{"host_class=web"}, 3},
		{"sitedrop_http_response_bytes_total", []string{"host_class=site"}, float64(siteBytes)},
		{"sitedrop_deploys_total", []string{"op=create", "result=ok"}, 1},
		{"sitedrop_deploys_total", []string{"op=update", "result=refused"}, 1},
		{"sitedrop_deploys_total", []string{"op=update", "result=failed"}, 0},
		{"sitedrop_deploy_duration_seconds", []string{"op=create", "result=ok"}, 1},
	} {
		if got := delta(c.name, c.labels...); got != c.want {
			t.Errorf("%s%v moved by %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	// each page read the content cache once; the first may have missed
	hits, misses := delta("sitedrop_content_cache_requests_total", "result=hit"), delta("sitedrop_content_cache_requests_total", "result=miss")
	if hits+misses != 3 || hits < 2 {
		t.Errorf("content cache: %v hits, %v misses; want 3 lookups, 2 hits at least", hits, misses)
	}
	if got := metricValue(after, "sitedrop_deploy_slots"); got != 4 {
		t.Errorf("sitedrop_deploy_slots = %v, want --concurrent-deploys (4)", got)
	}
	if metricValue(after, "go_goroutines") == 0 || after["process_cpu_seconds_total"] == nil {
		t.Error("the Go and process collectors are missing")
	}
}

// TestMetricsNotOnMainListener: /metrics is served on --metrics' own
// listener only: the main listener answers it as any other path, on the
// web host and on a site host, never with the metrics.
func TestMetricsNotOnMainListener(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	addr, maddr := loopback(freePort(t)), loopback(freePort(t))
	startServe(t, copyData(t, templates.fixtures(t)), nil, addr, "--http", addr, "--metrics", maddr)
	for _, host := range []string{"web.test", "alice-site.sites.test", "127.0.0.1"} {
		code, body := listenerGet(t, addr, host, metrics.Path)
		if code == http.StatusOK || strings.Contains(body, "sitedrop_") || strings.Contains(body, "go_goroutines") {
			t.Errorf("GET %s on %s: %d %.80q: the metrics leak onto the main listener", metrics.Path, host, code, body)
		}
	}
	if code, body := listenerGet(t, maddr, "web.test", metrics.Path); code != http.StatusOK || !strings.Contains(body, "sitedrop_http_requests_total") {
		t.Errorf("the metrics listener: %d %.80q", code, body)
	}
	if code, _ := listenerGet(t, maddr, "alice-site.sites.test", "/"); code != http.StatusNotFound {
		t.Errorf("a site on the metrics listener: %d, want 404", code)
	}
}

// TestMetricsOffByDefault: without --metrics nothing more listens, and
// the front door does not measure.
func TestMetricsOffByDefault(t *testing.T) {
	app, sd := newFixtureApp(t)
	defer app.Cleanup()
	if sd.cfg.Serve.MetricsAddr != "" {
		t.Fatalf("--metrics defaults to %q", sd.cfg.Serve.MetricsAddr)
	}
	if sd.front().Metrics != nil {
		t.Error("the front door measures without --metrics")
	}
}

// TestMetricsCountMailAndWebhooks: e-mails handed to the mailer and the
// webhook deliveries' outcomes, from their records, are counted.
func TestMetricsCountMailAndWebhooks(t *testing.T) {
	app, sd := newFixtureApp(t)
	defer app.Cleanup()
	gather := func() map[string]*dto.MetricFamily {
		fams, err := sd.metrics.Registry().Gather()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]*dto.MetricFamily{}
		for _, f := range fams {
			out[f.GetName()] = f
		}
		return out
	}

	if err := sendMail(app, "someone@example.com", "Hello", templ.Raw("<p>hello</p>"), "hello"); err != nil {
		t.Fatal(err)
	}
	app.OnMailerSend().BindFunc(func(*core.MailerEvent) error { return errors.New("no mail server") })
	if err := sendMail(app, "someone@example.com", "Hello", templ.Raw("<p>hello</p>"), "hello"); err == nil {
		t.Fatal("the failing mailer sent")
	}
	m := gather()
	if sent, failed := metricValue(m, "sitedrop_emails_total", "result=sent"), metricValue(m, "sitedrop_emails_total", "result=failed"); sent != 1 || failed != 1 {
		t.Errorf("e-mails: %v sent, %v failed; want 1 and 1", sent, failed)
	}

	// a delivery: an attempt fails (retrying), then one succeeds; another
	// fails for good
	alice, _ := app.FindAuthRecordByEmail("users", "alice@example.com")
	newDelivery := func() *forms.Delivery {
		d, err := forms.NewDelivery(app)
		if err != nil {
			t.Fatal(err)
		}
		d.SetDeploymentID(idAliceSite)
		d.SetAccount(alice.Id)
		d.SetEvent("submission")
		d.SetURL("https://example.com/hook")
		d.SetType("json")
		d.SetPayload("{}")
		d.SetSecret("whsec_test")
		d.SetStatus(forms.DeliveryPending)
		if err := app.Save(d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	save := func(d *forms.Delivery, status string, attempts int) {
		d.SetStatus(status)
		d.SetAttempts(attempts)
		if err := app.Save(d); err != nil {
			t.Fatal(err)
		}
	}
	d := newDelivery()
	save(d, forms.DeliveryPending, 1)
	save(d, forms.DeliveryDelivered, 2)
	d2 := newDelivery()
	save(d2, forms.DeliveryFailed, 1)
	m = gather()
	for result, want := range map[string]float64{metrics.WebhookRetrying: 1, metrics.WebhookDelivered: 1, metrics.WebhookFailed: 1} {
		if got := metricValue(m, "sitedrop_webhook_deliveries_total", "result="+result); got != want {
			t.Errorf("webhook deliveries %s: %v, want %v", result, got, want)
		}
	}
}

// TestSlotWaitHook: the deploy gate tells the metrics of every wait for
// a slot (intake.Gate.Observe): it counts a deploy waiting for a slot and
// how long it waited, once per wait, with the slot or without.
func TestSlotWaitHook(t *testing.T) {
	m := metrics.New()
	gate := intake.NewGate(1, 1, 1)
	gate.Observe(m)
	gather := func(name string) float64 {
		fams, err := m.Registry().Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fams {
			if f.GetName() == name {
				return metricValue(map[string]*dto.MetricFamily{name: f}, name)
			}
		}
		return 0
	}
	release, err := gate.Acquire(t.Context()) // a free slot: a wait of ~0
	if err != nil {
		t.Fatal(err)
	}
	waited := make(chan error)
	ctx, cancel := context.WithCancel(t.Context())
	go func() { _, err := gate.Acquire(ctx); waited <- err }()
	deadline := time.Now().Add(10 * time.Second)
	for gather("sitedrop_deploy_slot_waiting") != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the second deploy never counted as waiting")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel() // the client goes away: the wait ends without a slot
	if err := <-waited; err == nil {
		t.Fatal("a cancelled wait got a slot")
	}
	release()
	if got := gather("sitedrop_deploy_slot_waiting"); got != 0 {
		t.Errorf("waiting after the waits: %v, want 0", got)
	}
	if got := gather("sitedrop_deploy_slot_wait_seconds"); got != 2 {
		t.Errorf("waits observed: %v, want 2", got)
	}
	if gate.InUse() != 0 || gate.Slots() != 1 {
		t.Errorf("slots in use %d of %d, want 0 of 1", gate.InUse(), gate.Slots())
	}
}

// TestReplicaMetrics serves a replica with --metrics: its site answers
// are counted by host class, and its last sync and lag are reported.
func TestReplicaMetrics(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	srv := s3test.Start(t)
	sd, done := s3App(t, srv)
	defer done()
	alice, _ := sd.app.FindAuthRecordByEmail("users", "alice@example.com")
	if _, err := sd.svc.Create(context.Background(), sites.CreateParams{Owner: alice, Slug: "rep-site", Upload: htmlUpload("<h1>rep</h1>")}); err != nil {
		t.Fatal(err)
	}
	flush(t, sd)

	addr, maddr := loopback(freePort(t)), loopback(freePort(t))
	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan error, 1)
	c := server.DefaultConfig()
	c.HTTPAddr, c.MetricsAddr = addr, maddr
	go func() {
		ended <- server.RunReplica(ctx, c, server.ReplicaConfig{
			Store: sd.cfg.Store, OpenStore: server.OpenS3Store,
			Hosts: sites.NewHostSplit("web.test", "sites.test"),
		}, io.Discard, io.Discard)
	}()
	defer func() {
		cancel()
		if err := <-ended; err != nil {
			t.Errorf("replica: %v", err)
		}
	}()
	var code int
	for deadline := time.Now().Add(20 * time.Second); code != http.StatusOK; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the replica never served the site: %d", code)
		}
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			code, _ = listenerGet(t, addr, "rep-site.sites.test", "/")
		}
	}
	before := scrapeMetrics(t, maddr)
	for range 2 {
		if code, _ := listenerGet(t, addr, "rep-site.sites.test", "/"); code != http.StatusOK {
			t.Fatalf("replica site: %d", code)
		}
	}
	if code, _ := listenerGet(t, addr, "elsewhere.example", "/"); code != http.StatusNotFound {
		t.Fatalf("unknown host on the replica: %d", code)
	}
	after := scrapeMetrics(t, maddr)
	delta := func(labels ...string) float64 {
		return metricValue(after, "sitedrop_http_requests_total", labels...) - metricValue(before, "sitedrop_http_requests_total", labels...)
	}
	if got := delta("host_class=site", "status_class=2xx"); got != 2 {
		t.Errorf("replica site answers: %v, want 2", got)
	}
	if got := delta("host_class=unknown", "status_class=4xx"); got != 1 {
		t.Errorf("replica unknown host: %v, want 1", got)
	}
	last := metricValue(after, "sitedrop_replica_last_sync_timestamp_seconds")
	if now := float64(time.Now().Unix()); last < now-60 || last > now+1 {
		t.Errorf("last sync at %v, now is %v", last, now)
	}
	if lag := metricValue(after, "sitedrop_replica_sync_lag_seconds"); lag < 0 || lag > 30 {
		t.Errorf("sync lag %v s", lag)
	}
	if code, body := listenerGet(t, addr, "rep-site.sites.test", metrics.Path); code == http.StatusOK || strings.Contains(body, "sitedrop_") {
		t.Errorf("the replica serves its metrics on the main listener: %d", code)
	}
}

// TestMetricsCertificates: under --https, the web host's certificate,
// obtained from an ACME CA (Pebble), is counted.
func TestMetricsCertificates(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an ACME CA and a server")
	}
	dns := startFakeDNS(t)
	httpPort, httpsPort := freePort(t), freePort(t)
	httpsAddr, httpAddr, maddr := loopback(httpsPort), loopback(httpPort), loopback(freePort(t))
	acme := startPebble(t, dns.addr, httpPort, httpsPort)
	startServe(t, copyData(t, templates.fixtures(t)), nil, httpsAddr,
		"--https", httpsAddr, "--http", httpAddr, "--metrics", maddr,
		"--acme-ca", acme.directory, "--acme-ca-root", acme.serverRoot, "--dns-resolvers", dns.addr)
	waitForCertificate(t, httpsAddr, "web.test", acme.roots)
	// the event follows the handshake's certificate closely: wait for it
	deadline := time.Now().Add(10 * time.Second)
	for metricValue(scrapeMetrics(t, maddr), "sitedrop_certificates_total", "result=obtained") < 1 {
		if time.Now().After(deadline) {
			t.Fatal("the obtained certificate was not counted")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := metricValue(scrapeMetrics(t, maddr), "sitedrop_certificates_total", "result=failed"); got != 0 {
		t.Errorf("%v failed certificates", got)
	}
}

// TestMetricsWebhookDelivery: a real delivery, failed once (502) then
// delivered, counts one retry and one delivery.
func TestMetricsWebhookDelivery(t *testing.T) {
	calls := 0
	var mu sync.Mutex
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if calls++; calls == 1 {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer rcv.Close()
	app, sd := newFixtureApp(t, func(c *Config) { c.WebhooksAllowPrivate = true })
	defer app.Cleanup()
	sd.deliverer.Backoff = func(int) time.Duration { return 0 }
	mux := newMux(t, app)
	if res, body := do(t, mux, http.MethodPost, "/webhooks/"+idAliceSite, `{"url":"`+rcv.URL+`/hook","events":["submission"]}`, bearer(keyAlice)); res.StatusCode != 200 {
		t.Fatalf("webhook: %d %s", res.StatusCode, body)
	}
	do(t, mux, http.MethodPost, "/submit/"+idAliceSite, `{"name":"Ann"}`, nil)
	for range 2 {
		if _, err := sd.deliverer.RunOnce(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	fams, err := sd.metrics.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]*dto.MetricFamily{}
	for _, f := range fams {
		m[f.GetName()] = f
	}
	for result, want := range map[string]float64{metrics.WebhookRetrying: 1, metrics.WebhookDelivered: 1, metrics.WebhookFailed: 0} {
		if got := metricValue(m, "sitedrop_webhook_deliveries_total", "result="+result); got != want {
			t.Errorf("webhook deliveries %s: %v, want %v", result, got, want)
		}
	}
}
