package hooks

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"sitedrop/sites/forms"
)

// TestWebhookDeliveryEndToEnd: a form submission reaches a real receiver
// on loopback as a signed generic webhook, after a failed first attempt.
func TestWebhookDeliveryEndToEnd(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var bodies [][]byte
	var sigs []string
	calls := 0
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		calls++
		bodies = append(bodies, b)
		sigs = append(sigs, r.Header.Get("X-Sitedrop-Signature"))
		if calls == 1 {
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
	res, body := do(t, mux, http.MethodPost, "/webhooks/"+idAliceSite, `{"url":"`+rcv.URL+`/hook","events":["submission"]}`, bearer(keyAlice))
	if res.StatusCode != 200 {
		t.Fatalf("webhook: %d %s", res.StatusCode, body)
	}
	var hook struct{ Secret string }
	json.Unmarshal([]byte(body), &hook)
	do(t, mux, http.MethodPost, "/submit/"+idAliceSite, `{"name":"Ann"}`, nil)

	for range 2 {
		if _, err := sd.deliverer.RunOnce(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if calls != 2 {
		t.Fatalf("%d requests, want a failed one and its retry", calls)
	}
	for i, b := range bodies {
		if sigs[i] != forms.SignWebhook(hook.Secret, b) {
			t.Fatalf("request %d: bad signature", i)
		}
	}
	var got struct {
		Event      string
		Deployment map[string]string
		Submission struct {
			ID   string
			Data map[string]any
		}
		SentAt string `json:"sent_at"`
	}
	if err := json.Unmarshal(bodies[1], &got); err != nil {
		t.Fatal(err)
	}
	if got.Event != "submission" || got.Deployment["slug"] != "alice-site" || got.Deployment["url"] != "http://alice-site.sites.test/" ||
		got.Submission.Data["name"] != "Ann" || !strings.HasSuffix(got.SentAt, "Z") {
		t.Fatalf("payload %s", bodies[1])
	}
	dels := deliveries(t, app, forms.EventSubmission)
	if len(dels) != 1 || dels[0].GetString("status") != "delivered" || dels[0].GetInt("attempts") != 2 {
		t.Fatalf("delivery row: %v", dels)
	}
}
