// Package abuse is the public instance's abuse reports: anyone reports a
// site by its URL (no account), the report names the deployment the URL
// serves, and the admins work the queue and are mailed the new reports
// in batches.
//
// Usage (hooks builds one Reports and hands it to the routes, the jobs
// and, later, the moderation page):
//
//	reports := abuse.New(app, abuse.Config{
//		Hosts:   hosts,       // which hosts are site hosts (slug, previews)
//		Domains: domainTable, // the verified custom domains
//		Mail:    sendBatch,   // how a batch reaches the admins
//	})
//	rep, err := reports.Open(abuse.NewReport{URL: u, Reason: "phishing", IP: ip})
//	open, err := reports.List(abuse.Filter{Status: abuse.StatusOpen})
//	_, err = reports.Dismiss(rep.Id, "not phishing: a bank's own test page")
//	n, err := reports.MailDue(time.Now()) // the cron job, every minute
//
// A URL that no site here serves is refused (ErrUnknownSite): a report
// names something an admin can act on, and the queue takes no junk.
package abuse
