package hooks

import (
	"fmt"
	"time"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites/forms"
	"sitedrop/ui"
)

// setNotifyEmail turns a deployment's notification mails on or off; when
// turned on, only submissions from now on are mailed.
func setNotifyEmail(app core.App, dep *core.Record, on bool) error {
	return forms.SetNotifyEmail(app, forms.DeploymentOf(dep), on)
}

// sendDueNotifications mails the owners of deployments with e-mail
// notifications on about submissions not mailed yet, when their last mail
// is at least a minute old (forms.FindDueNotifications): the first
// submission is mailed at once, later ones within the minute are batched
// into the next mail. It returns how many deployments it handled.
func (sd *sitedrop) sendDueNotifications(now time.Time) (int, error) {
	ids, err := forms.FindDueNotifications(sd.app, now)
	if err != nil {
		return 0, err
	}
	sent := 0
	for _, id := range ids {
		if err := sd.notifyDeployment(id, now); err != nil {
			sd.app.Logger().Error("send submission notification", "deployment", id, "error", err)
			continue
		}
		sent++
	}
	return sent, nil
}

// notifyDeployment mails one deployment's owner its new submissions.
func (sd *sitedrop) notifyDeployment(id string, now time.Time) error {
	n, err := forms.FindNotification(sd.app, id)
	if err != nil || n == nil {
		return err
	}
	slug := n.Deployment.Slug()
	p := ui.SubmissionsMailProps{
		Slug:    slug,
		SiteURL: sd.cfg.links().Site(slug),
		Total:   n.Total,
		ListURL: sd.cfg.links().Web() + "/account/sites/" + n.Deployment.Id,
	}
	for _, s := range n.Submissions {
		p.Items = append(p.Items, ui.SubmissionItem{CreatedAt: s.JSON().CreatedAt, Fields: uiFields(s.Fields())})
	}
	subject := fmt.Sprintf("New submission on %s", p.Slug)
	if p.Total > 1 {
		subject = fmt.Sprintf("%d new submissions on %s", p.Total, p.Slug)
	}
	if err := sendMail(sd.app, n.To, subject, ui.SubmissionsMail(p), ui.SubmissionsText(p)); err != nil {
		// try again in a minute, not on every pass
		_ = forms.MarkNotifyFailed(sd.app, n.Deployment.Id, now)
		return err
	}
	return forms.MarkNotified(sd.app, n, now)
}
