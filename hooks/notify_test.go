package hooks

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
)

// TestNotificationMailBatching sends notification mails over SMTP to an
// in-process receiver: the first submission is mailed at once, the ones
// that follow within the minute come together in the next mail.
func TestNotificationMailBatching(t *testing.T) {
	t.Parallel()
	app, sd := newFixtureApp(t)
	defer app.Cleanup()
	rcv := newSMTPReceiver(t)
	routed := useRealSMTP(t, app, rcv)
	mux := newMux(t, app)

	if res, body := do(t, mux, http.MethodPut, "/notifications/"+idAliceSite, `{"email":true}`, bearer(keyAlice)); res.StatusCode != 200 {
		t.Fatalf("notifications on: %d %s", res.StatusCode, body)
	}
	now := time.Now()
	do(t, mux, http.MethodPost, "/submit/"+idAliceSite, `{"name":"Ann","message":"hello"}`, nil)
	if n, err := sd.notifier.SendDue(now); err != nil || n != 1 {
		t.Fatalf("first submission: %d mails, %v", n, err)
	}
	first := parseMail(t, rcv.waitMailTo(t, "alice@example.com", 5*time.Second).Data)
	if first.Subject != "New submission on alice-site" || !strings.Contains(first.Text, "message: hello") ||
		!strings.Contains(first.HTML, "hello") {
		t.Fatalf("first mail %q: %q", first.Subject, first.Text)
	}
	// the mail links to the submissions, on the site page's Forms tab
	if !strings.Contains(first.Text, "All submissions: http://web.test/account/sites/"+idAliceSite+"/forms#submissions\r\n") {
		t.Fatalf("the mail's link to the submissions: %q", first.Text)
	}
	if n, m := strings.Index(first.Text, "name: Ann"), strings.Index(first.Text, "message: hello"); n < 0 || n > m {
		t.Fatalf("fields not in the form's order: %q", first.Text)
	}

	do(t, mux, http.MethodPost, "/submit/"+idAliceSite, `{"name":"Ben"}`, nil)
	do(t, mux, http.MethodPost, "/submit/"+idAliceSite, `{"name":"Cy"}`, nil)
	if n, _ := sd.notifier.SendDue(now.Add(30 * time.Second)); n != 0 {
		t.Fatalf("%d mails within the minute, want 0", n)
	}
	if n, _ := sd.notifier.SendDue(now.Add(61 * time.Second)); n != 1 {
		t.Fatalf("%d mails after the minute, want 1", n)
	}
	if got := len(rcv.Mails()); got != 2 {
		t.Fatalf("%d mails received, want 2", got)
	}
	second := parseMail(t, rcv.Mails()[1].Data)
	if second.Subject != "2 new submissions on alice-site" || !strings.Contains(second.Text, "name: Ben") ||
		!strings.Contains(second.Text, "name: Cy") || strings.Contains(second.Text, "Ann") {
		t.Fatalf("batched mail %q: %q", second.Subject, second.Text)
	}
	if n, _ := sd.notifier.SendDue(now.Add(5 * time.Minute)); n != 0 {
		t.Fatal("mailed the same submissions twice")
	}
	if routed.Load() != 2 {
		t.Fatalf("%d mails went over SMTP", routed.Load())
	}
}

// TestNoNotificationsWithoutOwner: anonymous deployments have no owner, so
// nothing is mailed until they are claimed; turned-off deployments get no
// mail either.
func TestNoNotificationsWithoutOwner(t *testing.T) {
	t.Parallel()
	app, sd := newFixtureApp(t)
	defer app.Cleanup()
	mux := newMux(t, app)
	anon, _ := app.FindRecordById(sites.DeploymentsCollection, idAnonSite)
	anon.Set("notify_email", true) // e.g. set in the dashboard
	if err := app.Save(anon); err != nil {
		t.Fatal(err)
	}
	do(t, mux, http.MethodPost, "/submit/"+idAnonSite, `{"name":"Ann"}`, nil)
	do(t, mux, http.MethodPost, "/submit/"+idBobSite, `{"name":"Ann"}`, nil) // notifications off
	if n, _ := sd.notifier.SendDue(time.Now()); n != 0 || app.TestMailer.TotalSend() != 0 {
		t.Fatalf("%d mails", n)
	}
	// once claimed, the owner hears about new submissions
	res, _ := do(t, mux, http.MethodPost, "/deploy/claim", `{"slug":"anon-site","claim_token":"`+anonToken+`"}`, bearer(keyPia))
	if res.StatusCode != 200 {
		t.Fatal("claim")
	}
	if n, _ := sd.notifier.SendDue(time.Now()); n != 1 || app.TestMailer.LastMessage().To[0].Address != "pia@example.com" {
		t.Fatalf("after claim: %d mails", n)
	}
}

// TestNotificationKeepsConcurrentChanges: a deploy made while a
// notification mail is being sent is not undone when the mail is recorded.
func TestNotificationKeepsConcurrentChanges(t *testing.T) {
	t.Parallel()
	app, sd := newFixtureApp(t)
	defer app.Cleanup()
	mux := newMux(t, app)
	do(t, mux, http.MethodPut, "/notifications/"+idAliceSite, `{"email":true}`, bearer(keyAlice))
	do(t, mux, http.MethodPost, "/submit/"+idAliceSite, `{"name":"Ann"}`, nil)
	app.OnMailerSend().BindFunc(func(e *core.MailerEvent) error {
		// a PUT lands while the mail is on its way
		if res, body := do(t, mux, http.MethodPut, "/deploy/"+idAliceSite, `{"html":"<p>newer</p>"}`, bearer(keyAlice)); res.StatusCode != 200 {
			t.Errorf("PUT: %d %s", res.StatusCode, body)
		}
		return e.Next()
	})
	if n, _ := sd.notifier.SendDue(time.Now()); n != 1 {
		t.Fatalf("%d mails", n)
	}
	if _, page := siteGet(t, app, "alice-site.sites.test", "/"); !strings.Contains(page, "newer") {
		t.Fatalf("the deploy made during the mail was undone: %q", page)
	}
}

// TestNotificationFailureBacksOff: when mail fails, the deployment waits a
// minute before the next try instead of being retried on every pass.
func TestNotificationFailureBacksOff(t *testing.T) {
	t.Parallel()
	app, sd := newFixtureApp(t)
	defer app.Cleanup()
	mux := newMux(t, app)
	do(t, mux, http.MethodPut, "/notifications/"+idAliceSite, `{"email":true}`, bearer(keyAlice))
	do(t, mux, http.MethodPost, "/submit/"+idAliceSite, `{"name":"Ann"}`, nil)
	fail := true
	tries := 0
	app.OnMailerSend().BindFunc(func(e *core.MailerEvent) error {
		tries++
		if fail {
			return errors.New("smtp down")
		}
		return e.Next()
	})
	now := time.Now()
	sd.notifier.SendDue(now)
	sd.notifier.SendDue(now.Add(5 * time.Second))
	if tries != 1 {
		t.Fatalf("%d tries within the minute, want 1", tries)
	}
	fail = false
	if n, _ := sd.notifier.SendDue(now.Add(61 * time.Second)); n != 1 || tries != 2 {
		t.Fatalf("after the minute: %d mails, %d tries", n, tries)
	}
}
