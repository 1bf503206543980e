package abuse

import (
	"fmt"
	"time"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
)

// Batch is one mail to the admins: the reports not mailed yet.
type Batch struct {
	// To are the admins' (superusers') addresses.
	To []string
	// Total is how many reports the batch holds; Reports lists the
	// oldest of them, at most MailMaxListed.
	Total   int
	Reports []*Report
	// Open is how many reports wait for a decision, these included.
	Open int
}

// MailDue mails the admins the reports not mailed yet, in one batch,
// when the last batch is at least MailInterval old: the first report
// after a quiet spell goes out at once, those that follow within the
// interval wait for the next batch. It returns how many reports it
// mailed (0 when none was due, or no admin has an address). A failed
// send marks nothing: the next pass tries again.
func (r *Reports) MailDue(now time.Time) (int, error) {
	if r.cfg.Mail == nil {
		return 0, nil
	}
	due, err := r.mailDue(now)
	if err != nil || !due {
		return 0, err
	}
	var ids []string
	err = r.app.DB().Select("id").From(Collection).
		Where(dbx.HashExp{FieldMailedAt: ""}).
		OrderBy(FieldCreated, "id").Limit(mailMaxMarked).Column(&ids)
	if err != nil {
		return 0, fmt.Errorf("find unmailed reports: %w", err)
	}
	if len(ids) == 0 {
		return 0, nil
	}
	to, err := adminAddresses(r.app)
	if err != nil || len(to) == 0 {
		return 0, err
	}
	b := &Batch{To: to, Total: len(ids)}
	listed := ids[:min(len(ids), MailMaxListed)]
	recs, err := r.app.FindRecordsByIds(Collection, listed)
	if err != nil {
		return 0, fmt.Errorf("load unmailed reports: %w", err)
	}
	byID := make(map[string]*core.Record, len(recs))
	for _, rec := range recs {
		byID[rec.Id] = rec
	}
	for _, id := range listed { // oldest first
		if rec := byID[id]; rec != nil {
			b.Reports = append(b.Reports, ReportOf(rec))
		}
	}
	if b.Open, err = r.CountOpen(); err != nil {
		return 0, err
	}
	if err := r.cfg.Mail(b); err != nil {
		return 0, fmt.Errorf("mail %d reports: %w", len(ids), err)
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	_, err = r.app.DB().Update(Collection, dbx.Params{FieldMailedAt: sites.DBTime(now)}, dbx.In("id", args...)).Execute()
	if err != nil {
		return 0, fmt.Errorf("mark %d reports mailed: %w", len(ids), err)
	}
	return len(ids), nil
}

// mailDue reports whether the last batch is MailInterval old (or there
// was none).
func (r *Reports) mailDue(now time.Time) (bool, error) {
	var last string
	err := r.app.DB().Select("COALESCE(MAX(" + FieldMailedAt + "), '')").From(Collection).Row(&last)
	if err != nil {
		return false, fmt.Errorf("last report mail: %w", err)
	}
	return last == "" || last <= sites.DBTime(now.Add(-r.cfg.MailInterval)), nil
}

// adminAddresses are the superusers' e-mail addresses (the first run's
// installer account aside).
func adminAddresses(app core.App) ([]string, error) {
	recs, err := app.FindAllRecords(core.CollectionNameSuperusers)
	if err != nil {
		return nil, fmt.Errorf("find superusers: %w", err)
	}
	var to []string
	for _, rec := range recs {
		if e := rec.Email(); e != "" && e != core.DefaultInstallerEmail {
			to = append(to, e)
		}
	}
	return to, nil
}
