package hooks

import (
	"errors"
	"net/url"
	"time"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/hooks/internal/lifecycle"
	"sitedrop/sites/abuse"
	"sitedrop/ui"
)

// jobReportMail mails the admins the new abuse reports (Settings › Crons).
const jobReportMail = "sitedropMailReports"

// bindReports binds the abuse reports' rules and job: every writer of a
// report (the report route, the dashboard) meets abuse.CheckRecord, and
// every minute the new reports are mailed to the admins when a batch is
// due (abuse.Reports.MailDue: at most one mail per interval).
func bindReports(app core.App, jobs *lifecycle.Gate, reports *abuse.Reports) {
	app.OnRecordCreate(abuse.Collection).BindFunc(func(e *core.RecordEvent) error {
		abuse.DefaultStatus(e.Record)
		return e.Next()
	})
	app.OnRecordValidate(abuse.Collection).BindFunc(func(e *core.RecordEvent) error {
		if err := abuse.CheckRecord(e.Record); err != nil {
			return err
		}
		return e.Next()
	})
	app.Cron().MustAdd(jobReportMail, "* * * * *", func() {
		jobs.Run(func() {
			if _, err := reports.MailDue(time.Now()); err != nil {
				app.Logger().Error("abuse report mail", "error", err)
			}
		})
	})
}

// reportsMail returns how a batch of reports reaches the admins: one
// mail to each, listing the reports with links into the dashboard. The
// batch counts as mailed when one admin at least was sent it (a failure
// to the others is logged), so that one bad address does not resend the
// batch to the rest every minute.
func reportsMail(app core.App, cfg *Config) func(*abuse.Batch) error {
	return func(b *abuse.Batch) error {
		web := cfg.links().Web()
		p := ui.ReportsMailProps{
			Total:    b.Total,
			Open:     b.Open,
			QueueURL: web + "/_/#/collections?collection=" + abuse.Collection,
		}
		for _, r := range b.Reports {
			p.Items = append(p.Items, ui.ReportItem{
				CreatedAt: r.Created().UTC().Format(time.RFC3339),
				Reason:    r.Reason(), URL: r.URL(), Slug: r.Slug(), Details: r.Details(), Email: r.Email(),
				AdminURL: web + "/_/#/collections?collection=" + abuse.Collection + "&record=" + url.QueryEscape(r.Id),
			})
		}
		subject := ui.ReportsMailSubject(p)
		var errs []error
		for _, to := range b.To {
			if err := sendMail(app, to, subject, ui.ReportsMail(p), ui.ReportsText(p)); err != nil {
				errs = append(errs, err)
			}
		}
		if len(errs) == len(b.To) { // no admin was told: the next pass tries again
			return errors.Join(errs...)
		}
		for _, err := range errs {
			app.Logger().Error("abuse report mail to an admin", "error", err)
		}
		return nil
	}
}
