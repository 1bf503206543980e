package hooks

import (
	"fmt"
	"sort"
	"time"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
	"sitedrop/sites/accounts"
	"sitedrop/sites/forms"
	"sitedrop/ui"
)

// Notification mail pacing and size.
const (
	notifyInterval   = time.Minute // at most one mail a minute per deployment
	notifyMaxListed  = 20          // submissions shown in one mail
	notifyMaxPerPass = 200         // deployments mailed in one pass
)

// setNotifyEmail turns a deployment's notification mails on or off; when
// turned on, only submissions from now on are mailed.
func setNotifyEmail(app core.App, dep *core.Record, on bool) error {
	if on && !dep.GetBool("notify_email") {
		dep.Set("notified_until", notifyFrom())
	}
	dep.Set("notify_email", on)
	return app.Save(dep)
}

// submissionFields lists a submission's fields by name, for pages and
// mails.
func submissionFields(data map[string]any) []ui.SubmissionField {
	out := make([]ui.SubmissionField, 0, len(data))
	for k, v := range data {
		out = append(out, ui.SubmissionField{Name: k, Value: displayValue(v)})
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out
}

// notifyFrom is the notified_until of a deployment whose notifications are
// turned on now: submissions from this millisecond on are mailed (a
// submission in the same millisecond as the switch is not lost).
func notifyFrom() time.Time { return time.Now().UTC().Add(-time.Millisecond) }

// sendDueNotifications mails the owners of deployments with e-mail
// notifications on about submissions not mailed yet, when their last mail
// is at least a minute old: the first submission is mailed at once, later
// ones within the minute are batched into the next mail. Anonymous
// deployments have no owner and are skipped until claimed. It returns how
// many mails it sent.
func (sd *sitedrop) sendDueNotifications(now time.Time) (int, error) {
	var rows []struct {
		ID string `db:"id"`
	}
	err := sd.app.DB().NewQuery(`
		SELECT d.[[id]] FROM {{deployments}} d
		WHERE d.[[notify_email]] = TRUE AND d.[[owner]] != ''
		  AND (d.[[last_mail_at]] = '' OR d.[[last_mail_at]] <= {:due})
		  AND EXISTS (SELECT 1 FROM {{submissions}} s WHERE s.[[deployment]] = d.[[id]] AND s.[[created]] > d.[[notified_until]])
		ORDER BY d.[[last_mail_at]]
		LIMIT {:max}`).
		Bind(dbx.Params{"due": sites.DBTime(now.Add(-notifyInterval)), "max": notifyMaxPerPass}).All(&rows)
	if err != nil {
		return 0, fmt.Errorf("find due notifications: %w", err)
	}
	sent := 0
	for _, r := range rows {
		if err := sd.notifyDeployment(r.ID, now); err != nil {
			sd.app.Logger().Error("send submission notification", "deployment", r.ID, "error", err)
			continue
		}
		sent++
	}
	return sent, nil
}

// notifyDeployment mails one deployment's owner its new submissions.
func (sd *sitedrop) notifyDeployment(id string, now time.Time) error {
	dep, err := sd.app.FindRecordById(sites.DeploymentsCollection, id)
	if err != nil {
		return nil // deleted meanwhile
	}
	owner, err := sd.app.FindRecordById(accounts.UsersCollection, dep.GetString("owner"))
	if err != nil {
		return nil
	}
	since := sites.DBTime(dep.GetDateTime("notified_until").Time())
	filter, params := "deployment = {:d} && created > {:since}", dbx.Params{"d": dep.Id, "since": since}
	total, err := sd.app.CountRecords(forms.SubmissionsCollection, dbx.NewExp("deployment = {:d} AND created > {:since}", params))
	if err != nil || total == 0 {
		return err
	}
	subs, err := sd.app.FindRecordsByFilter(forms.SubmissionsCollection, filter, "-created", notifyMaxListed, 0, params)
	if err != nil || len(subs) == 0 {
		return err
	}
	p := ui.SubmissionsMailProps{
		Slug:    dep.GetString("slug"),
		SiteURL: sd.siteURL(dep.GetString("slug")),
		Total:   int(total),
		ListURL: sd.webURL() + "/account/sites/" + dep.Id,
	}
	for _, s := range subs {
		j := submissionJSON(s)
		p.Items = append(p.Items, ui.SubmissionItem{CreatedAt: j.CreatedAt, Fields: orderedFields([]byte(s.GetString("data")), j.Data)})
	}
	subject := fmt.Sprintf("New submission on %s", p.Slug)
	if p.Total > 1 {
		subject = fmt.Sprintf("%d new submissions on %s", p.Total, p.Slug)
	}
	if err := sendMail(sd.app, owner.Email(), subject, ui.SubmissionsMail(p), ui.SubmissionsText(p)); err != nil {
		// try again in a minute, not on every pass
		_ = sd.markMailed(dep.Id, dbx.Params{"last_mail_at": sites.DBTime(now)})
		return err
	}
	// The newest submission may be newer than the listed ones' newest only
	// if it arrived meanwhile; the next mail takes it.
	return sd.markMailed(dep.Id, dbx.Params{
		"notified_until": sites.DBTime(subs[0].GetDateTime("created").Time()),
		"last_mail_at":   sites.DBTime(now),
	})
}

// markMailed writes only the pacing columns of a deployment: a whole-record
// save could undo a deploy or a setting made while the mail was sent.
func (sd *sitedrop) markMailed(id string, cols dbx.Params) error {
	_, err := sd.app.NonconcurrentDB().Update(sites.DeploymentsCollection, cols, dbx.HashExp{"id": id}).Execute()
	if err != nil {
		return fmt.Errorf("record notification mail of %s: %w", id, err)
	}
	return nil
}
