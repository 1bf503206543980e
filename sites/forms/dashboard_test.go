package forms_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites/forms"
)

// TestQueueTestIsDeliveredAndListed: a test delivery reaches every webhook,
// subscribed or not, signed like any other, and shows in its log.
func TestQueueTestIsDeliveredAndListed(t *testing.T) {
	t.Parallel()
	app := newHookApp(t)
	rc := newReceiver(t, okAnswer)
	dep, ref := mustDeployment(t, app, "test-site")
	generic := mustWebhook(t, app, dep.Id, rc.URL+"/g", forms.WebhookGeneric, true, forms.EventSubmission)
	slack := mustWebhook(t, app, dep.Id, rc.URL+"/s", forms.WebhookSlack, true, forms.EventDeploymentDeleted)
	for _, hook := range []*core.Record{generic, slack} {
		if _, err := forms.QueueTest(app, forms.WebhookOf(hook), ref); err != nil {
			t.Fatal(err)
		}
	}
	mustRunOnce(t, loopbackDeliverer(app), 2)
	var sawGeneric, sawSlack bool
	for _, r := range rc.got() {
		if strings.Contains(string(r.body), `"text":"Test message from sitedrop for test-site"`) {
			sawSlack = true
			continue
		}
		m := checkSigned(t, r, forms.EventTest)
		sawGeneric = m["event"] == "test" && m["deployment"].(map[string]any)["slug"] == "test-site"
	}
	if !sawGeneric || !sawSlack {
		t.Fatalf("generic %v, slack %v: %d requests", sawGeneric, sawSlack, len(rc.got()))
	}
	log, err := forms.RecentDeliveries(app, generic.Id, 10)
	if err != nil || len(log) != 1 {
		t.Fatalf("log = %v, %v", log, err)
	}
	if d := log[0]; d.Event() != forms.EventTest || d.Status() != forms.DeliveryDelivered || d.Attempts() != 1 || d.LastStatus() != 204 {
		t.Fatalf("logged %+v", d)
	}
}

// TestRedeliver: a finished delivery is queued again as a copy with its
// own id and body; pending ones and those of deleted webhooks are refused.
func TestRedeliver(t *testing.T) {
	t.Parallel()
	app := newHookApp(t)
	rc := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			failAnswer(n, w, r)
			return
		}
		okAnswer(n, w, r)
	})
	dep, ref := mustDeployment(t, app, "re-site")
	hook := mustWebhook(t, app, dep.Id, rc.URL, forms.WebhookGeneric, true)
	mustEnqueue(t, app, ref, forms.EventSubmission, testSubmission(), 1)
	orig := deliveries(t, app, "", nil)[0]
	if _, err := forms.Redeliver(app, forms.DeliveryOf(orig)); !errors.Is(err, forms.ErrDeliveryPending) {
		t.Fatalf("pending: %v", err)
	}
	d := loopbackDeliverer(app)
	d.MaxAttempts = 1
	mustRunOnce(t, d, 1)
	orig = reload(t, app, orig)
	if orig.GetString("status") != forms.DeliveryFailed {
		t.Fatalf("status %s", orig.GetString("status"))
	}
	cp, err := forms.Redeliver(app, forms.DeliveryOf(orig))
	if err != nil {
		t.Fatal(err)
	}
	if cp.Id == orig.Id || cp.GetString("payload") != orig.GetString("payload") || cp.GetString("event") != forms.EventSubmission {
		t.Fatalf("copy %v", cp)
	}
	mustRunOnce(t, d, 1)
	if len(rc.got()) != 2 || reload(t, app, cp.Record).GetString("status") != forms.DeliveryDelivered {
		t.Fatalf("copy not delivered: %d calls, %s", len(rc.got()), reload(t, app, cp.Record).GetString("status"))
	}
	checkSigned(t, rc.got()[1], forms.EventSubmission)
	if log, _ := forms.RecentDeliveries(app, hook.Id, 1); len(log) != 1 || log[0].Id != cp.Id {
		t.Fatalf("newest first: %v", log)
	}
	if err := app.Delete(hook); err != nil {
		t.Fatal(err)
	}
	if n, err := app.CountRecords(forms.DeliveriesCollection, dbx.HashExp{"status": forms.DeliveryPending}); err != nil || n != 0 {
		t.Fatalf("%d pending, %v", n, err)
	}
	if _, err := forms.Redeliver(app, forms.DeliveryOf(reload(t, app, cp.Record))); !errors.Is(err, forms.ErrWebhookGone) {
		t.Fatalf("webhook deleted: %v", err)
	}
}
