package forms_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tests"

	_ "sitedrop/migrations"
	"sitedrop/sites"
	"sitedrop/sites/forms"
)

const hookSecret = "whsec_test_secret"

func newHookApp(t *testing.T) *tests.TestApp {
	t.Helper()
	app, err := tests.NewTestApp(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(app.Cleanup)
	return app
}

func mustDeployment(t *testing.T, app core.App, slug string) (*core.Record, forms.DeploymentRef) {
	t.Helper()
	col, err := app.FindCollectionByNameOrId(sites.DeploymentsCollection)
	if err != nil {
		t.Fatal(err)
	}
	rec := core.NewRecord(col)
	rec.Set("slug", slug)
	rec.Set("status", sites.StatusActive)
	rec.Set("storage_type", sites.StorageHTML)
	if err := app.Save(rec); err != nil {
		t.Fatal(err)
	}
	return rec, forms.DeploymentRef{ID: rec.Id, Slug: slug, URL: "https://" + slug + ".sites.test/"}
}

func mustWebhook(t *testing.T, app core.App, depID, url, typ string, active bool, events ...string) *core.Record {
	t.Helper()
	col, err := app.FindCollectionByNameOrId(forms.WebhooksCollection)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) == 0 {
		events = forms.WebhookEvents
	}
	rec := core.NewRecord(col)
	rec.Set("deployment", depID)
	rec.Set("url", url)
	rec.Set("type", typ)
	rec.Set("events", events)
	rec.Set("secret", hookSecret)
	rec.Set("active", active)
	if err := app.Save(rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

func deliveries(t *testing.T, app core.App, filter string, params dbx.Params) []*core.Record {
	t.Helper()
	recs, err := app.FindRecordsByFilter(forms.DeliveriesCollection, filter, "created,id", 0, 0, params)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func mustEnqueue(t *testing.T, app core.App, dep forms.DeploymentRef, event string, sub *forms.SubmissionJSON, want int) {
	t.Helper()
	n, err := forms.EnqueueWebhooks(app, dep.ID, event, dep, sub)
	if err != nil || n != want {
		t.Fatalf("EnqueueWebhooks(%s) = %d, %v; want %d", event, n, err, want)
	}
}

func testSubmission() *forms.SubmissionJSON {
	return &forms.SubmissionJSON{ID: "sub123", CreatedAt: "2026-01-02T03:04:05Z",
		Data: map[string]any{"name": "Ann", "email": "ann@example.com", "message": "a <b> & c\nsecond line", "n": 3}}
}

// received is one request a receiver got.
type received struct {
	header http.Header
	body   []byte
}

// receiver is a webhook endpoint on loopback; respond decides the answer
// to the n-th request (1-based).
type receiver struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []received
}

func newReceiver(t *testing.T, respond func(n int, w http.ResponseWriter, r *http.Request)) *receiver {
	t.Helper()
	rc := &receiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.reqs = append(rc.reqs, received{r.Header.Clone(), body})
		n := len(rc.reqs)
		rc.mu.Unlock()
		respond(n, w, r)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) got() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.reqs...)
}

func okAnswer(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }

func failAnswer(_ int, w http.ResponseWriter, _ *http.Request) {
	http.Error(w, "receiver broke", http.StatusInternalServerError)
}

// loopbackDeliverer may reach the loopback receivers and retries fast.
func loopbackDeliverer(app core.App) *forms.Deliverer {
	d := forms.NewDeliverer(app, forms.WebhookGuard{AllowPrivate: true})
	d.Timeout = 2 * time.Second
	d.Backoff = func(int) time.Duration { return 50 * time.Millisecond }
	return d
}

func mustRunOnce(t *testing.T, d *forms.Deliverer, want int) {
	t.Helper()
	n, err := d.RunOnce(context.Background())
	if err != nil || n != want {
		t.Fatalf("RunOnce = %d, %v; want %d", n, err, want)
	}
}

func reload(t *testing.T, app core.App, rec *core.Record) *core.Record {
	t.Helper()
	fresh, err := app.FindRecordById(rec.Collection().Name, rec.Id)
	if err != nil {
		t.Fatal(err)
	}
	return fresh
}

var sentAtLast = regexp.MustCompile(`,"sent_at":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"}$`)

// checkSigned verifies the headers and signature of a generic request and
// returns its decoded body.
func checkSigned(t *testing.T, r received, event string) map[string]any {
	t.Helper()
	if got := r.header.Get("X-Sitedrop-Signature"); got != forms.SignWebhook(hookSecret, r.body) {
		t.Fatalf("signature %q does not verify the body %s", got, r.body)
	}
	if r.header.Get("Content-Type") != "application/json" || r.header.Get("User-Agent") != "sitedrop-webhooks" ||
		r.header.Get("X-Sitedrop-Event") != event || r.header.Get("X-Sitedrop-Delivery") == "" {
		t.Fatalf("headers %v", r.header)
	}
	if !sentAtLast.Match(r.body) {
		t.Fatalf("body does not end in sent_at: %s", r.body)
	}
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestSignWebhook(t *testing.T) {
	t.Parallel()
	got := forms.SignWebhook("key", []byte("The quick brown fox jumps over the lazy dog"))
	if got != "sha256=f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8" {
		t.Fatal(got)
	}
}

func TestEnqueueWebhooks(t *testing.T) {
	t.Parallel()
	app := newHookApp(t)
	depRec, dep := mustDeployment(t, app, "hooked-site")
	_, other := mustDeployment(t, app, "other-site")
	all := mustWebhook(t, app, dep.ID, "https://hooks.example.com/all", forms.WebhookGeneric, true)
	slack := mustWebhook(t, app, dep.ID, "https://hooks.slack.com/services/T/B/X", forms.WebhookSlack, true)
	mustWebhook(t, app, dep.ID, "https://hooks.example.com/off", forms.WebhookGeneric, false)
	updates := mustWebhook(t, app, dep.ID, "https://hooks.example.com/updates", forms.WebhookGeneric, true, forms.EventDeploymentUpdated)
	mustWebhook(t, app, other.ID, "https://hooks.example.com/other", forms.WebhookGeneric, true)

	before := time.Now().Add(-time.Second)
	mustEnqueue(t, app, dep, forms.EventSubmission, testSubmission(), 2)
	rows := deliveries(t, app, "event = 'submission'", nil)
	if len(rows) != 2 {
		t.Fatalf("%d submission rows", len(rows))
	}
	byHook := map[string]*core.Record{}
	for _, r := range rows {
		byHook[r.GetString("webhook")] = r
		if r.GetString("deployment") != dep.ID || r.GetString("status") != "pending" || r.GetInt("attempts") != 0 ||
			r.GetString("secret") != hookSecret || r.GetDateTime("next_attempt_at").Time().Before(before) ||
			r.GetDateTime("next_attempt_at").Time().After(time.Now()) {
			t.Fatalf("row %v", r.FieldsData())
		}
	}
	g, s := byHook[all.Id], byHook[slack.Id]
	if g == nil || s == nil || g.GetString("url") != all.GetString("url") || g.GetString("type") != "generic" ||
		s.GetString("type") != "slack" || s.GetString("url") != slack.GetString("url") {
		t.Fatalf("rows %v", byHook)
	}
	wantGeneric := `{"event":"submission","deployment":{"id":"` + dep.ID + `","slug":"hooked-site","url":"https://hooked-site.sites.test/"},` +
		`"submission":{"id":"sub123","data":{"email":"ann@example.com","message":"a <b> & c\nsecond line","n":3,"name":"Ann"},"created_at":"2026-01-02T03:04:05Z"}}`
	if got := g.GetString("payload"); got != wantGeneric {
		t.Fatalf("generic payload\n got %s\nwant %s", got, wantGeneric)
	}
	wantSlack := `{"text":"New submission on <https://hooked-site.sites.test/|hooked-site>: email=ann@example.com, message=a &lt;b&gt; &amp; c second line, n=3, name=Ann"}`
	if got := s.GetString("payload"); got != wantSlack {
		t.Fatalf("slack payload\n got %s\nwant %s", got, wantSlack)
	}

	// deployment.updated: no submission even if one is passed.
	mustEnqueue(t, app, dep, forms.EventDeploymentUpdated, testSubmission(), 3)
	for _, r := range deliveries(t, app, "event = 'deployment.updated'", nil) {
		switch r.GetString("webhook") {
		case all.Id, updates.Id:
			want := `{"event":"deployment.updated","deployment":{"id":"` + dep.ID + `","slug":"hooked-site","url":"https://hooked-site.sites.test/"}}`
			if r.GetString("payload") != want {
				t.Fatalf("payload %s", r.GetString("payload"))
			}
		case slack.Id:
			if want := `{"text":"Deployment hooked-site was updated: https://hooked-site.sites.test/"}`; r.GetString("payload") != want {
				t.Fatalf("payload %s", r.GetString("payload"))
			}
		default:
			t.Fatalf("row for webhook %s", r.GetString("webhook"))
		}
	}

	// deployment.deleted: no deployment relation, so the rows outlive it.
	mustEnqueue(t, app, dep, forms.EventDeploymentDeleted, nil, 2)
	del := deliveries(t, app, "event = 'deployment.deleted'", nil)
	for _, r := range del {
		if r.GetString("deployment") != "" || r.GetString("webhook") == "" {
			t.Fatalf("deleted row %v", r.FieldsData())
		}
		if r.GetString("type") == "slack" && r.GetString("payload") != `{"text":"Deployment hooked-site was deleted"}` {
			t.Fatalf("payload %s", r.GetString("payload"))
		}
	}
	if err := app.Delete(depRec); err != nil {
		t.Fatal(err)
	}
	if left := deliveries(t, app, "id != ''", nil); len(left) != 2 || left[0].GetString("event") != "deployment.deleted" ||
		left[0].GetString("webhook") != "" {
		t.Fatalf("after deleting the deployment: %d rows left", len(left))
	}

	if _, err := forms.EnqueueWebhooks(app, other.ID, "deployment.created", other, nil); err == nil {
		t.Fatal("unknown event accepted")
	}
	mustEnqueue(t, app, forms.DeploymentRef{ID: "nosuchdeploy123"}, forms.EventSubmission, nil, 0)
}

func TestEnqueueWebhooksInTransaction(t *testing.T) {
	t.Parallel()
	app := newHookApp(t)
	_, dep := mustDeployment(t, app, "tx-site")
	mustWebhook(t, app, dep.ID, "https://hooks.example.com/x", forms.WebhookGeneric, true)
	rollback := errors.New("rollback")
	err := app.RunInTransaction(func(tx core.App) error {
		mustEnqueue(t, tx, dep, forms.EventSubmission, testSubmission(), 1)
		return rollback
	})
	if !errors.Is(err, rollback) {
		t.Fatal(err)
	}
	if n := len(deliveries(t, app, "id != ''", nil)); n != 0 {
		t.Fatalf("%d rows survived the rollback", n)
	}
	if err := app.RunInTransaction(func(tx core.App) error {
		mustEnqueue(t, tx, dep, forms.EventSubmission, testSubmission(), 1)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n := len(deliveries(t, app, "id != ''", nil)); n != 1 {
		t.Fatalf("%d rows after commit", n)
	}
}

func TestSlackTextLimits(t *testing.T) {
	t.Parallel()
	app := newHookApp(t)
	_, dep := mustDeployment(t, app, "slack-site")
	mustWebhook(t, app, dep.ID, "https://hooks.slack.com/services/T/B/X", forms.WebhookSlack, true)
	data := map[string]any{"long": strings.Repeat("é", 500)}
	for _, k := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p", "q", "r"} {
		data[k] = strings.Repeat("x", 300)
	}
	mustEnqueue(t, app, dep, forms.EventSubmission, &forms.SubmissionJSON{ID: "s", Data: data}, 1)
	var p struct{ Text string }
	if err := json.Unmarshal([]byte(deliveries(t, app, "id != ''", nil)[0].GetString("payload")), &p); err != nil {
		t.Fatal(err)
	}
	if n := utf8.RuneCountInString(p.Text); n > 3000 || n < 2500 {
		t.Fatalf("text of %d runes", n)
	}
	if !strings.Contains(p.Text, ": a="+strings.Repeat("x", 199)+"…, b=") || !strings.HasSuffix(p.Text, ", …") {
		t.Fatalf("values not cut to 200 or text not cut at a field: %q", p.Text)
	}
	if strings.Contains(p.Text, "\n") {
		t.Fatal("multi-line text")
	}
}

func TestDeliveryRetriesUntilDelivered(t *testing.T) {
	t.Parallel()
	app := newHookApp(t)
	_, dep := mustDeployment(t, app, "retry-site")
	rc := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			failAnswer(n, w, r)
			return
		}
		okAnswer(n, w, r)
	})
	mustWebhook(t, app, dep.ID, rc.URL+"/hook", forms.WebhookGeneric, true)

	d := loopbackDeliverer(app)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { d.Run(ctx); close(done) }()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("Run did not return after cancel")
		}
	}()
	time.Sleep(50 * time.Millisecond) // Run is now idle, waiting up to 5s

	mustEnqueue(t, app, dep, forms.EventSubmission, testSubmission(), 1)
	d.Wake()
	row := deliveries(t, app, "id != ''", nil)[0]
	// Run idles up to 5 s: delivery within 3 s proves Wake (and the short
	// retry wait) worked.
	waitFor(t, 3*time.Second, func() bool { return reload(t, app, row).GetString("status") == "delivered" })
	row = reload(t, app, row)
	if row.GetInt("attempts") != 2 || row.GetInt("last_status") != 204 || row.GetString("last_error") != "" {
		t.Fatalf("row %v", row.FieldsData())
	}
	got := rc.got()
	if len(got) != 2 {
		t.Fatalf("%d requests, want 2", len(got))
	}
	for _, r := range got {
		m := checkSigned(t, r, forms.EventSubmission)
		sub, _ := m["submission"].(map[string]any)
		if m["event"] != "submission" || sub["id"] != "sub123" || r.header.Get("X-Sitedrop-Delivery") != row.Id {
			t.Fatalf("body %s", r.body)
		}
	}
	if bytes.Equal(got[0].body, got[1].body) && got[0].header.Get("X-Sitedrop-Signature") != got[1].header.Get("X-Sitedrop-Signature") {
		t.Fatal("same body, different signatures")
	}
}

func waitFor(t *testing.T, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v", limit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestDeliveryFailsAfterMaxAttempts(t *testing.T) {
	t.Parallel()
	app := newHookApp(t)
	_, dep := mustDeployment(t, app, "failing-site")
	rc := newReceiver(t, failAnswer)
	mustWebhook(t, app, dep.ID, rc.URL, forms.WebhookGeneric, true)
	mustEnqueue(t, app, dep, forms.EventDeploymentUpdated, nil, 1)

	d := &forms.Deliverer{App: app, Guard: forms.WebhookGuard{AllowPrivate: true}, MaxAttempts: 3,
		Backoff: func(int) time.Duration { return 0 }}
	row := deliveries(t, app, "id != ''", nil)[0]
	for i := 1; i <= 3; i++ {
		mustRunOnce(t, d, 1) // due again at once, but one attempt per run
		row = reload(t, app, row)
		if row.GetInt("attempts") != i || row.GetInt("last_status") != 500 ||
			row.GetString("last_error") != "HTTP 500: receiver broke" {
			t.Fatalf("after attempt %d: %v", i, row.FieldsData())
		}
	}
	if row.GetString("status") != "failed" {
		t.Fatalf("status %q after 3 attempts", row.GetString("status"))
	}
	mustRunOnce(t, d, 0)
	if n := len(rc.got()); n != 3 {
		t.Fatalf("%d requests, want 3", n)
	}
	for _, r := range rc.got() {
		checkSigned(t, r, forms.EventDeploymentUpdated)
	}
}

func TestDeliveryTimeoutIsAFailure(t *testing.T) {
	t.Parallel()
	app := newHookApp(t)
	_, dep := mustDeployment(t, app, "slow-site")
	rc := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(3 * time.Second):
		}
		okAnswer(n, w, r)
	})
	mustWebhook(t, app, dep.ID, rc.URL, forms.WebhookGeneric, true)
	mustEnqueue(t, app, dep, forms.EventDeploymentUpdated, nil, 1)

	d := loopbackDeliverer(app)
	d.Timeout = 200 * time.Millisecond
	d.Backoff = func(int) time.Duration { return time.Hour }
	start := time.Now()
	mustRunOnce(t, d, 1)
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("attempt took %v", took)
	}
	row := deliveries(t, app, "id != ''", nil)[0]
	if row.GetString("status") != "pending" || row.GetInt("attempts") != 1 || row.GetInt("last_status") != 0 ||
		!strings.Contains(row.GetString("last_error"), "Timeout") ||
		row.GetDateTime("next_attempt_at").Time().Before(time.Now().Add(50*time.Minute)) {
		t.Fatalf("row %v", row.FieldsData())
	}
	mustRunOnce(t, d, 0) // not due for an hour
}

func TestDeliveryQueueSurvivesRestart(t *testing.T) {
	t.Parallel()
	app := newHookApp(t)
	_, dep := mustDeployment(t, app, "restart-site")
	rc := newReceiver(t, okAnswer)
	mustWebhook(t, app, dep.ID, rc.URL, forms.WebhookGeneric, true)
	for range 3 {
		mustEnqueue(t, app, dep, forms.EventSubmission, testSubmission(), 1)
	}
	rows := deliveries(t, app, "id != ''", nil)
	// Only the first is due before the restart.
	for _, r := range rows[1:] {
		r.Set("next_attempt_at", time.Now().Add(time.Minute))
		if err := app.Save(r); err != nil {
			t.Fatal(err)
		}
	}
	mustRunOnce(t, loopbackDeliverer(app), 1)

	app.ResetBootstrapState()
	app2, err := tests.NewTestApp(app.DataDir())
	if err != nil {
		t.Fatal(err)
	}
	defer app2.Cleanup()
	d := loopbackDeliverer(app2)
	d.Now = func() time.Time { return time.Now().Add(2 * time.Minute) }
	mustRunOnce(t, d, 2)
	mustRunOnce(t, d, 0)

	counts := map[string]int{}
	for _, r := range rc.got() {
		checkSigned(t, r, forms.EventSubmission)
		counts[r.header.Get("X-Sitedrop-Delivery")]++
	}
	for _, r := range rows {
		if counts[r.Id] != 1 {
			t.Fatalf("delivery %s sent %d times (%v)", r.Id, counts[r.Id], counts)
		}
		if got := reload(t, app2, r); got.GetString("status") != "delivered" || got.GetInt("attempts") != 1 {
			t.Fatalf("row %v", got.FieldsData())
		}
	}
}

func TestDeliveryOfDeletedDeployment(t *testing.T) {
	t.Parallel()
	app := newHookApp(t)
	rc := newReceiver(t, okAnswer)

	// A submission delivery goes with its deployment.
	gone, goneRef := mustDeployment(t, app, "gone-site")
	mustWebhook(t, app, gone.Id, rc.URL, forms.WebhookGeneric, true)
	mustEnqueue(t, app, goneRef, forms.EventSubmission, testSubmission(), 1)
	if err := app.Delete(gone); err != nil {
		t.Fatal(err)
	}
	d := loopbackDeliverer(app)
	mustRunOnce(t, d, 0)
	if n := len(rc.got()); n != 0 {
		t.Fatalf("%d requests for a deleted deployment", n)
	}

	// A deployment.deleted delivery, queued in the delete's transaction,
	// is sent afterwards.
	dep, ref := mustDeployment(t, app, "deleted-site")
	mustWebhook(t, app, dep.Id, rc.URL, forms.WebhookGeneric, true, forms.EventDeploymentDeleted)
	if err := app.RunInTransaction(func(tx core.App) error {
		mustEnqueue(t, tx, ref, forms.EventDeploymentDeleted, nil, 1)
		return tx.Delete(dep)
	}); err != nil {
		t.Fatal(err)
	}
	if n, _ := app.CountRecords(forms.WebhooksCollection); n != 0 {
		t.Fatalf("%d webhooks left", n)
	}
	mustRunOnce(t, d, 1)
	got := rc.got()
	if len(got) != 1 {
		t.Fatalf("%d requests", len(got))
	}
	m := checkSigned(t, got[0], forms.EventDeploymentDeleted)
	d2, _ := m["deployment"].(map[string]any)
	if m["event"] != "deployment.deleted" || d2["id"] != dep.Id || d2["slug"] != "deleted-site" || m["submission"] != nil {
		t.Fatalf("body %s", got[0].body)
	}
	row := deliveries(t, app, "id != ''", nil)[0]
	if row.GetString("status") != "delivered" || row.GetInt("attempts") != 1 {
		t.Fatalf("row %v", row.FieldsData())
	}
}

func TestDeliveryOfDeletedOrInactiveWebhook(t *testing.T) {
	t.Parallel()
	app := newHookApp(t)
	rc := newReceiver(t, okAnswer)
	_, ref := mustDeployment(t, app, "hook-gone-site")
	deleted := mustWebhook(t, app, ref.ID, rc.URL+"/deleted", forms.WebhookGeneric, true)
	paused := mustWebhook(t, app, ref.ID, rc.URL+"/paused", forms.WebhookGeneric, true)
	mustEnqueue(t, app, ref, forms.EventSubmission, testSubmission(), 2)
	if err := app.Delete(deleted); err != nil {
		t.Fatal(err)
	}
	paused.Set("active", false)
	if err := app.Save(paused); err != nil {
		t.Fatal(err)
	}
	mustRunOnce(t, loopbackDeliverer(app), 0)
	if n := len(rc.got()); n != 0 {
		t.Fatalf("%d requests", n)
	}
	for _, r := range deliveries(t, app, "id != ''", nil) {
		if r.GetString("status") != "failed" || r.GetInt("attempts") != 0 || !strings.Contains(r.GetString("last_error"), "webhook is") &&
			!strings.Contains(r.GetString("last_error"), "webhook was deleted") {
			t.Fatalf("row %v", r.FieldsData())
		}
	}
}

func TestDeliveryRefusesPrivateTarget(t *testing.T) {
	t.Parallel()
	app := newHookApp(t)
	_, dep := mustDeployment(t, app, "private-site")
	rc := newReceiver(t, okAnswer)
	// The webhook passed its check once; now it points at loopback.
	mustWebhook(t, app, dep.ID, rc.URL, forms.WebhookGeneric, true)
	mustEnqueue(t, app, dep, forms.EventSubmission, testSubmission(), 1)

	d := forms.NewDeliverer(app, forms.WebhookGuard{})
	before := time.Now()
	mustRunOnce(t, d, 1)
	if n := len(rc.got()); n != 0 {
		t.Fatalf("%d requests reached the private receiver", n)
	}
	row := deliveries(t, app, "id != ''", nil)[0]
	next := row.GetDateTime("next_attempt_at").Time()
	if row.GetString("status") != "pending" || row.GetInt("attempts") != 1 ||
		!strings.Contains(row.GetString("last_error"), "private or reserved address 127.0.0.1") ||
		next.Before(before.Add(10*time.Second)) || next.After(time.Now().Add(30*time.Second)) {
		t.Fatalf("row %v (default first retry must come within 30s)", row.FieldsData())
	}
}
