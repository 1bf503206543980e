package hooks

import (
	"fmt"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/hooks/pages"
	"sitedrop/sites/forms"
	"sitedrop/ui"
)

// setNotifyEmail turns a deployment's notification mails on or off; when
// turned on, only submissions from now on are mailed.
func setNotifyEmail(app core.App, dep *core.Record, on bool) error {
	return forms.SetNotifyEmail(app, forms.DeploymentOf(dep), on)
}

// notificationMail returns how a notification goes out (what
// forms.Notifier sends): a mail to the deployment's owner listing its new
// submissions.
func notificationMail(app core.App, cfg *Config) func(*forms.Notification) error {
	return func(n *forms.Notification) error {
		slug := n.Deployment.Slug()
		p := ui.SubmissionsMailProps{
			Slug:    slug,
			SiteURL: cfg.links().Site(slug),
			Total:   n.Total,
			ListURL: cfg.links().Web() + ui.TabPath(n.Deployment.Id, ui.TabForms) + "#" + ui.PanelSubmissions.ID,
		}
		for _, s := range n.Submissions {
			p.Items = append(p.Items, ui.SubmissionItem{CreatedAt: s.JSON().CreatedAt, Fields: pages.SubmissionFields(s.Fields())})
		}
		subject := fmt.Sprintf("New submission on %s", p.Slug)
		if p.Total > 1 {
			subject = fmt.Sprintf("%d new submissions on %s", p.Total, p.Slug)
		}
		return sendMail(app, n.To, subject, ui.SubmissionsMail(p), ui.SubmissionsText(p))
	}
}
