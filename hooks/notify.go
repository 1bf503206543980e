package hooks

import (
	"fmt"
	"sort"
	"time"

	"github.com/pocketbase/dbx"

	"sitedrop/sites"
	"sitedrop/ui"
)

// Notification mail pacing and size.
const (
	notifyInterval   = time.Minute // at most one mail a minute per deployment
	notifyMaxListed  = 20          // submissions shown in one mail
	notifyMaxPerPass = 200         // deployments mailed in one pass
)

// nowUTC is the current time in UTC.
func nowUTC() time.Time { return time.Now().UTC() }

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
		LIMIT {:max}`).
		Bind(dbx.Params{"due": pbDate(now.Add(-notifyInterval)), "max": notifyMaxPerPass}).All(&rows)
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
	owner, err := sd.app.FindRecordById(sites.UsersCollection, dep.GetString("owner"))
	if err != nil {
		return nil
	}
	since := pbDate(dep.GetDateTime("notified_until").Time())
	subs, err := sd.app.FindRecordsByFilter(sites.SubmissionsCollection, "deployment = {:d} && created > {:since}",
		"-created", 0, 0, dbx.Params{"d": dep.Id, "since": since})
	if err != nil || len(subs) == 0 {
		return err
	}
	p := ui.SubmissionsMailProps{
		Slug:    dep.GetString("slug"),
		SiteURL: sd.siteURL(dep.GetString("slug")),
		Total:   len(subs),
		ListURL: sd.webURL() + "/account",
	}
	for i, s := range subs {
		if i == notifyMaxListed {
			break
		}
		j := submissionJSON(s)
		item := ui.SubmissionItem{CreatedAt: j.CreatedAt}
		for k, v := range j.Data {
			item.Fields = append(item.Fields, ui.SubmissionField{Name: k, Value: csvCell(v)})
		}
		sort.Slice(item.Fields, func(a, b int) bool { return item.Fields[a].Name < item.Fields[b].Name })
		p.Items = append(p.Items, item)
	}
	subject := fmt.Sprintf("New submission on %s", p.Slug)
	if p.Total > 1 {
		subject = fmt.Sprintf("%d new submissions on %s", p.Total, p.Slug)
	}
	if err := sendMail(sd.app, owner.Email(), subject, ui.SubmissionsMail(p), ui.SubmissionsText(p)); err != nil {
		return err
	}
	dep.Set("notified_until", subs[0].GetDateTime("created"))
	dep.Set("last_mail_at", now.UTC())
	return sd.app.Save(dep)
}

// pbDate formats t the way PocketBase stores dates, for comparisons in SQL.
func pbDate(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05.000Z")
}
