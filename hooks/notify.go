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
	filter, params := "deployment = {:d} && created > {:since}", dbx.Params{"d": dep.Id, "since": since}
	total, err := sd.app.CountRecords(sites.SubmissionsCollection, dbx.NewExp("deployment = {:d} AND created > {:since}", params))
	if err != nil || total == 0 {
		return err
	}
	subs, err := sd.app.FindRecordsByFilter(sites.SubmissionsCollection, filter, "-created", notifyMaxListed, 0, params)
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
		item := ui.SubmissionItem{CreatedAt: j.CreatedAt}
		for k, v := range j.Data {
			item.Fields = append(item.Fields, ui.SubmissionField{Name: k, Value: displayValue(v)})
		}
		sort.Slice(item.Fields, func(a, b int) bool { return item.Fields[a].Name < item.Fields[b].Name })
		p.Items = append(p.Items, item)
	}
	subject := fmt.Sprintf("New submission on %s", p.Slug)
	if p.Total > 1 {
		subject = fmt.Sprintf("%d new submissions on %s", p.Total, p.Slug)
	}
	if err := sendMail(sd.app, owner.Email(), subject, ui.SubmissionsMail(p), ui.SubmissionsText(p)); err != nil {
		// try again in a minute, not on every pass
		_ = sd.markMailed(dep.Id, dbx.Params{"last_mail_at": pbDate(now)})
		return err
	}
	// The newest submission may be newer than the listed ones' newest only
	// if it arrived meanwhile; the next mail takes it.
	return sd.markMailed(dep.Id, dbx.Params{
		"notified_until": pbDate(subs[0].GetDateTime("created").Time()),
		"last_mail_at":   pbDate(now),
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

// pbDate formats t the way PocketBase stores dates, for comparisons in SQL.
func pbDate(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05.000Z")
}
