package metrics

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
)

// value is the value of the series of name whose labels include labels
// ("k=v"; a histogram's: its count), 0 when none.
func value(t *testing.T, m *Metrics, name string, labels ...string) float64 {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	series:
		for _, s := range f.GetMetric() {
			have := map[string]string{}
			for _, l := range s.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for _, kv := range labels {
				k, v, _ := strings.Cut(kv, "=")
				if have[k] != v {
					continue series
				}
			}
			return seriesValue(s)
		}
	}
	return 0
}

func seriesValue(s *dto.Metric) float64 {
	switch {
	case s.Counter != nil:
		return s.Counter.GetValue()
	case s.Gauge != nil:
		return s.Gauge.GetValue()
	case s.Histogram != nil:
		return float64(s.Histogram.GetSampleCount())
	}
	return 0
}

// TestMeasure: an answer is counted by its class, its final status (not
// an informational one) and its body's bytes, written or sent from a
// file (ReadFrom), and a handler that writes nothing is a 200.
func TestMeasure(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, []byte(strings.Repeat("x", 1000)), 0o644); err != nil {
		t.Fatal(err)
	}
	m := New()
	for _, c := range []struct {
		class   HostClass
		handler func(w http.ResponseWriter)
	}{
		{Site, func(w http.ResponseWriter) { io.WriteString(w, "hello") }},
		{Site, func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, "nope")
		}},
		{CustomDomain, func(w http.ResponseWriter) {
			f, err := os.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := io.Copy(w, f); err != nil {
				t.Fatal(err)
			}
		}},
		{Web, func(w http.ResponseWriter) {}},
		{Unknown, func(w http.ResponseWriter) { http.Error(w, "bad", http.StatusMisdirectedRequest) }},
		{HostClass(200), func(w http.ResponseWriter) { w.WriteHeader(http.StatusBadGateway) }},
	} {
		rec := httptest.NewRecorder()
		m.Measure(rec, httptest.NewRequest(http.MethodGet, "/", nil), func(w http.ResponseWriter, _ *http.Request) HostClass {
			c.handler(w)
			return c.class
		})
	}
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"sitedrop_http_requests_total", []string{"host_class=site", "status_class=2xx"}, 1},
		{"sitedrop_http_requests_total", []string{"host_class=site", "status_class=4xx"}, 1},
		{"sitedrop_http_requests_total", []string{"host_class=site", "status_class=1xx"}, 0},
		{"sitedrop_http_requests_total", []string{"host_class=custom_domain", "status_class=2xx"}, 1},
		{"sitedrop_http_requests_total", []string{"host_class=web", "status_class=2xx"}, 1},
		{"sitedrop_http_requests_total", []string{"host_class=unknown", "status_class=4xx"}, 1},
		{"sitedrop_http_requests_total", []string{"host_class=unknown", "status_class=5xx"}, 1},
		{"sitedrop_http_response_bytes_total", []string{"host_class=site"}, 9},
		{"sitedrop_http_response_bytes_total", []string{"host_class=custom_domain"}, 1000},
		{"sitedrop_http_request_duration_seconds", []string{"host_class=site"}, 2},
	} {
		if got := value(t, m, c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
}

// TestInformationalStatus: a 1xx status is not the answer's.
func TestInformationalStatus(t *testing.T) {
	cw := &countingWriter{ResponseWriter: &discard{h: http.Header{}}}
	cw.WriteHeader(http.StatusEarlyHints)
	cw.WriteHeader(http.StatusNotFound)
	if cw.status != http.StatusNotFound {
		t.Errorf("status %d, want 404", cw.status)
	}
}

// discard is a ResponseWriter that keeps nothing.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(int)             {}

// TestMeasureKeepsWriterInterfaces: the writer a handler is given still
// flushes, hijacks and sends files through the connection's own writer.
func TestMeasureKeepsWriterInterfaces(t *testing.T) {
	m := New()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.Measure(w, r, func(w http.ResponseWriter, r *http.Request) HostClass {
			if _, ok := w.(io.ReaderFrom); !ok {
				t.Error("no ReadFrom: sendfile is lost")
			}
			if r.URL.Path != "/hijack" {
				if err := http.NewResponseController(w).Flush(); err != nil {
					t.Errorf("flush: %v", err)
				}
			} else {
				c, _, err := http.NewResponseController(w).Hijack()
				if err != nil {
					t.Errorf("hijack: %v", err)
					return Web
				}
				c.Close()
			}
			return Web
		})
	}))
	defer srv.Close()
	res, err := http.Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if _, err := http.Get(srv.URL + "/hijack"); err == nil {
		t.Error("the hijacked connection answered")
	}
}

// TestMeasureAllocatesNothing: measuring an answer allocates nothing
// (the writer is pooled, the series built in advance).
func TestMeasureAllocatesNothing(t *testing.T) {
	m := New()
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	serve := func(w http.ResponseWriter, _ *http.Request) HostClass {
		w.WriteHeader(http.StatusOK)
		return Site
	}
	m.Measure(w, r, serve)
	if n := testing.AllocsPerRun(100, func() { m.Measure(w, r, serve) }); n != 0 {
		t.Errorf("Measure allocates %v times per answer, want 0", n)
	}
}

// TestEvents: the events the parts hand over land in their series.
func TestEvents(t *testing.T) {
	m := New()
	m.ContentCache(true)
	m.ContentCache(true)
	m.ContentCache(false)
	m.StoreError("s3", "GetObject")
	m.CertificateEvent("cert_obtained", map[string]any{"renewal": false})
	m.CertificateEvent("cert_obtained", map[string]any{"renewal": true})
	m.CertificateEvent("cert_failed", nil)
	m.CertificateEvent("cert_obtaining", nil) // not counted
	m.Email(nil)
	m.Email(errors.New("down"))
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"sitedrop_content_cache_requests_total", []string{"result=hit"}, 2},
		{"sitedrop_content_cache_requests_total", []string{"result=miss"}, 1},
		{"sitedrop_store_errors_total", []string{"backend=s3", "op=GetObject"}, 1},
		{"sitedrop_certificates_total", []string{"result=obtained"}, 1},
		{"sitedrop_certificates_total", []string{"result=renewed"}, 1},
		{"sitedrop_certificates_total", []string{"result=failed"}, 1},
		{"sitedrop_emails_total", []string{"result=sent"}, 1},
		{"sitedrop_emails_total", []string{"result=failed"}, 1},
	} {
		if got := value(t, m, c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	for status, want := range map[int]string{200: DeployOK, 201: DeployOK, 400: DeployRefused, 404: DeployRefused, 499: DeployRefused, 500: DeployFailed, 503: DeployFailed} {
		if got := DeployResult(status); got != want {
			t.Errorf("DeployResult(%d) = %s, want %s", status, got, want)
		}
	}
}

// TestListenServesOnlyMetrics: the listener answers GET /metrics, and
// nothing else.
func TestListenServesOnlyMetrics(t *testing.T) {
	m := New()
	s, err := Listen("127.0.0.1:0", m)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(t.Context())
	base := "http://" + s.Addr().String()
	res, err := http.Get(base + Path)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(body), "sitedrop_http_requests_total") {
		t.Fatalf("GET %s: %d %.100q", Path, res.StatusCode, body)
	}
	for _, path := range []string{"/", "/api/health", "/metrics/x"} {
		res, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, res.StatusCode)
		}
	}
	if _, err := Listen(s.Addr().String(), m); err == nil || !strings.Contains(err.Error(), "--metrics") {
		t.Errorf("a second listener on the same address: %v", err)
	}
}
