package hooks

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/cron"

	"sitedrop/sites/abuse"
)

// TestReportMailBatching mails the admins over SMTP to an in-process
// receiver: the first report after a quiet spell goes out at once, the
// ones that follow within the interval come together in the next mail,
// to every superuser, linking into the dashboard; the job is bound.
func TestReportMailBatching(t *testing.T) {
	t.Parallel()
	app, sd := newFixtureApp(t)
	defer app.Cleanup()
	rcv := newSMTPReceiver(t)
	useRealSMTP(t, app, rcv)
	mustSuperuser(t, app, "admin@example.com", "a-long-password")
	mustSuperuser(t, app, "second@example.com", "a-long-password")
	if !slices.ContainsFunc(app.Cron().Jobs(), func(j *cron.Job) bool { return j.Id() == jobReportMail }) {
		t.Fatal("the report mail job is not bound")
	}

	now := time.Now()
	if n, err := sd.reports.MailDue(now); err != nil || n != 0 {
		t.Fatalf("nothing to mail: %d, %v", n, err)
	}
	first, err := sd.reports.Open(abuse.NewReport{URL: "https://alice-site.sites.test/login", Reason: "phishing",
		Details: "asks for\nbank passwords", Email: "finder@example.org", IP: "192.0.2.1"})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := sd.reports.MailDue(now); err != nil || n != 1 {
		t.Fatalf("first report: %d mailed, %v", n, err)
	}
	m := parseMail(t, rcv.waitMailTo(t, "admin@example.com", 5*time.Second).Data)
	rcv.waitMailTo(t, "second@example.com", 5*time.Second)
	if m.Subject != "New abuse report" || !strings.Contains(m.Text, "phishing (site alice-site)") ||
		!strings.Contains(m.Text, "  URL: https://alice-site.sites.test/login\r\n") ||
		!strings.Contains(m.Text, "  Details: asks for\r\n    bank passwords\r\n") ||
		!strings.Contains(m.Text, "Open: http://web.test/_/#/collections?collection=reports&record="+first.Id) ||
		!strings.Contains(m.Text, "1 open in the queue") || !strings.Contains(m.HTML, "bank passwords") {
		t.Fatalf("first mail %q:\n%s", m.Subject, m.Text)
	}

	for _, u := range []string{"https://bob-site.sites.test/", "https://v1--alice-site.sites.test/"} {
		if _, err := sd.reports.Open(abuse.NewReport{URL: u, Reason: "spam"}); err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := sd.reports.MailDue(now.Add(time.Minute)); n != 0 {
		t.Fatalf("%d mailed within the interval, want 0", n)
	}
	if n, err := sd.reports.MailDue(now.Add(abuse.DefaultMailInterval + time.Second)); err != nil || n != 2 {
		t.Fatalf("after the interval: %d mailed, %v", n, err)
	}
	if got := len(rcv.Mails()); got != 4 { // two batches, two admins
		t.Fatalf("%d mails received, want 4", got)
	}
	second := parseMail(t, rcv.Mails()[2].Data)
	if second.Subject != "2 new abuse reports" || !strings.Contains(second.Text, "site bob-site") ||
		!strings.Contains(second.Text, "v1--alice-site") || strings.Contains(second.Text, "bank passwords") ||
		!strings.Contains(second.Text, "3 open in the queue") {
		t.Fatalf("second mail %q:\n%s", second.Subject, second.Text)
	}
	if n, _ := sd.reports.MailDue(now.Add(2 * abuse.DefaultMailInterval)); n != 0 {
		t.Fatalf("%d mailed again, want 0", n)
	}
}

// TestReportQueue: the admins' service functions (the moderation page's)
// list, dismiss and act on reports; every writer, the dashboard
// included, keeps what the reporter sent, and a report created without a
// status is open.
func TestReportQueue(t *testing.T) {
	t.Parallel()
	app, sd := newFixtureApp(t)
	defer app.Cleanup()
	var ids []string
	for _, u := range []string{"alice-site.sites.test", "bob-site.sites.test", "https://alice-site.sites.test/b"} {
		rep, err := sd.reports.Open(abuse.NewReport{URL: u, Reason: "spam", Details: "d"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, rep.Id)
	}
	if rep, err := sd.reports.Dismiss(ids[0], "a test page"); err != nil || rep.Status() != abuse.StatusDismissed || rep.Note() != "a test page" {
		t.Fatalf("dismiss: %v %v", rep, err)
	}
	if rep, err := sd.reports.Action(ids[2], ""); err != nil || rep.Status() != abuse.StatusActioned {
		t.Fatalf("action: %v %v", rep, err)
	}
	if _, err := sd.reports.Dismiss("nosuchreport000", ""); err == nil {
		t.Fatal("dismissed a report that does not exist")
	}
	open, err := sd.reports.List(abuse.Filter{Status: abuse.StatusOpen})
	if err != nil || len(open) != 1 || open[0].Id != ids[1] {
		t.Fatalf("open: %v %v", open, err)
	}
	alice, err := sd.reports.List(abuse.Filter{DeploymentID: idAliceSite})
	if err != nil || len(alice) != 2 {
		t.Fatalf("alice's: %v %v", alice, err)
	}
	if n, err := sd.reports.CountOpen(); err != nil || n != 1 {
		t.Fatalf("count open: %d %v", n, err)
	}

	// the dashboard saves through the same record hooks
	rec, err := app.FindRecordById(abuse.Collection, ids[1])
	if err != nil {
		t.Fatal(err)
	}
	rec.Set(abuse.FieldDetails, "rewritten")
	if err := app.Save(rec); err == nil || !strings.Contains(err.Error(), "details") {
		t.Fatalf("details rewritten: %v", err)
	}
	rec, _ = app.FindRecordById(abuse.Collection, ids[1])
	rec.Set(abuse.FieldStatus, abuse.StatusDismissed)
	rec.Set(abuse.FieldNote, "checked by hand")
	if err := app.Save(rec); err != nil {
		t.Fatalf("a decision in the dashboard: %v", err)
	}
	col, _ := app.FindCollectionByNameOrId(abuse.Collection)
	fresh := core.NewRecord(col)
	fresh.Set(abuse.FieldURL, "https://bob-site.sites.test/")
	fresh.Set(abuse.FieldReason, "other")
	if err := app.Save(fresh); err != nil || fresh.GetString(abuse.FieldStatus) != abuse.StatusOpen {
		t.Fatalf("created in the dashboard: %v, status %q", err, fresh.GetString(abuse.FieldStatus))
	}

	// a deleted site's reports stay, naming it by its slug
	if err := app.Delete(mustRecord(t, app, idAliceSite)); err != nil {
		t.Fatal(err)
	}
	kept, err := sd.reports.Find(ids[0])
	if err != nil || kept.DeploymentID() != "" || kept.Slug() != "alice-site" || kept.Status() != abuse.StatusDismissed {
		t.Fatalf("a deleted site's report: %v %v", kept, err)
	}
}
