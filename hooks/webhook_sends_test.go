package hooks

import (
	"net/http"
	"testing"

	"github.com/pocketbase/dbx"

	"sitedrop/sites/forms"
	"sitedrop/ui"
)

// TestWebhookSendsLimitedPerAccount: "Send a test" and "Redeliver" share
// one budget per account (webhookSendsPerMinute): past it the page says
// so and queues nothing; another account's budget is its own.
func TestWebhookSendsLimitedPerAccount(t *testing.T) {
	t.Parallel()
	app := newSitePagesApp(t)
	mux := newMux(t, app)
	bobHook := mustWebhook(t, app, idBobSite, "https://93.184.216.34/bob")
	site := "/account/sites/" + idAliceSite + "/webhooks/" + idAliceHook
	post := func(url, session, kind, text string) {
		t.Helper()
		res, body := do(t, mux, http.MethodPost, url, "", formPost(session))
		if res.StatusCode != http.StatusSeeOther {
			t.Fatalf("POST %s: %d %s", url, res.StatusCode, body)
		}
		expectFlash(t, app, session, kind, text)
	}
	queued := func(event string, want int) {
		t.Helper()
		if n, err := app.CountRecords(forms.DeliveriesCollection, dbx.HashExp{"event": event, "status": forms.DeliveryPending}); err != nil || int(n) != want {
			t.Fatalf("%d pending %s deliveries (%v), want %d", n, event, err, want)
		}
	}

	for range webhookSendsPerMinute - 1 {
		post(site+"/test", sessionAlice, ui.FlashSuccess, "Test delivery queued")
	}
	post(site+"/deliveries/"+idFailedDeliver+"/redeliver", sessionAlice, ui.FlashSuccess, "queued again")
	queued(forms.EventTest, webhookSendsPerMinute-1)
	queued(forms.EventSubmission, 2) // the fixture's pending one and the copy

	post(site+"/test", sessionAlice, ui.FlashError, "Test not sent: "+msgRateLimited+". Try again in ")
	post(site+"/deliveries/"+idFailedDeliver+"/redeliver", sessionAlice, ui.FlashError, "Not queued again: "+msgRateLimited)
	queued(forms.EventTest, webhookSendsPerMinute-1)
	queued(forms.EventSubmission, 2)

	post("/account/sites/"+idBobSite+"/webhooks/"+bobHook.Id+"/test", sessionBob, ui.FlashSuccess, "Test delivery queued")
	queued(forms.EventTest, webhookSendsPerMinute)
}
