package forms

import (
	"errors"
	"fmt"
	"slices"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"
)

// ErrSubmissionNotFound: no such submission of that deployment.
var ErrSubmissionNotFound = errors.New("submission not found")

// submissionsNewestFirst is the order of every list of submissions: newest
// first, then by id, so that paging is stable.
var submissionsNewestFirst = []string{submissionCreated + " DESC", "id DESC"}

// FindSubmission returns the submission id of the deployment
// deploymentID; any other (or a failed read) is ErrSubmissionNotFound.
func FindSubmission(app core.App, deploymentID, id string) (*Submission, error) {
	s := &Submission{}
	err := app.RecordQuery(SubmissionsCollection).AndWhere(dbx.HashExp{"id": id}).Limit(1).One(s)
	if err != nil {
		return nil, fmt.Errorf("submission %q: %w", id, errors.Join(ErrSubmissionNotFound, err))
	}
	if s.DeploymentID() != deploymentID {
		return nil, fmt.Errorf("submission %q of deployment %q: %w", id, deploymentID, ErrSubmissionNotFound)
	}
	return s, nil
}

// DeleteSubmission deletes the submission id of the deployment
// deploymentID and returns it; any other is ErrSubmissionNotFound.
func DeleteSubmission(app core.App, deploymentID, id string) (*Submission, error) {
	s, err := FindSubmission(app, deploymentID, id)
	if err != nil {
		return nil, err
	}
	if err := app.Delete(s); err != nil {
		return nil, fmt.Errorf("delete submission %s: %w", id, err)
	}
	return s, nil
}

// CountSubmissions returns how many submissions the deployment has.
func CountSubmissions(app core.App, deploymentID string) (int64, error) {
	n, err := app.CountRecords(SubmissionsCollection, dbx.HashExp{submissionDeployment: deploymentID})
	if err != nil {
		return 0, fmt.Errorf("count submissions of %s: %w", deploymentID, err)
	}
	return n, nil
}

// FindSubmissions returns at most limit submissions of the deployment,
// newest first, skipping the first offset.
func FindSubmissions(app core.App, deploymentID string, limit, offset int) ([]*Submission, error) {
	var out []*Submission
	err := app.RecordQuery(SubmissionsCollection).AndWhere(dbx.HashExp{submissionDeployment: deploymentID}).
		OrderBy(submissionsNewestFirst...).Limit(int64(limit)).Offset(int64(offset)).All(&out)
	if err != nil {
		return nil, fmt.Errorf("find submissions of %s: %w", deploymentID, err)
	}
	return out, nil
}

// findSubmissionsSince returns at most limit submissions of the
// deployment created after since (a database time), newest first, and
// how many there are in all.
func findSubmissionsSince(app core.App, deploymentID, since string, limit int) ([]*Submission, int64, error) {
	where := dbx.And(dbx.HashExp{submissionDeployment: deploymentID},
		dbx.NewExp("[["+submissionCreated+"]] > {:since}", dbx.Params{"since": since}))
	total, err := app.CountRecords(SubmissionsCollection, where)
	if err != nil {
		return nil, 0, fmt.Errorf("count new submissions of %s: %w", deploymentID, err)
	}
	if total == 0 {
		return nil, 0, nil
	}
	var out []*Submission
	err = app.RecordQuery(SubmissionsCollection).AndWhere(where).
		OrderBy(submissionCreated + " DESC").Limit(int64(limit)).All(&out)
	if err != nil {
		return nil, 0, fmt.Errorf("find new submissions of %s: %w", deploymentID, err)
	}
	return out, total, nil
}

// EachSubmissionPage calls fn with every submission of a deployment,
// newest first, pageRows at a time. Keyset paging: each query is short,
// holds no database connection while fn runs (a client reading an
// export), and starts where the last one stopped (the redundant
// created <= bound lets SQLite seek on the (deployment, created) index
// instead of scanning from the newest row).
func EachSubmissionPage(app core.App, deploymentID string, pageRows int, fn func([]*Submission) error) error {
	where := dbx.Expression(dbx.HashExp{submissionDeployment: deploymentID})
	for {
		var page []*Submission
		err := app.RecordQuery(SubmissionsCollection).AndWhere(where).
			OrderBy(submissionsNewestFirst...).Limit(int64(pageRows)).All(&page)
		if err != nil {
			return fmt.Errorf("read submissions: %w", err)
		}
		if len(page) > 0 {
			if err := fn(page); err != nil {
				return err
			}
		}
		if len(page) < pageRows {
			return nil
		}
		last := page[len(page)-1]
		where = dbx.And(dbx.HashExp{submissionDeployment: deploymentID}, dbx.NewExp(
			"[["+submissionCreated+"]] <= {:c} AND ([["+submissionCreated+"]] < {:c} OR [[id]] < {:id})",
			dbx.Params{"c": last.GetString(submissionCreated), "id": last.Id}))
	}
}

// SubmissionFieldNames returns the max field names most used in the
// deployment's submissions, sorted, and whether other names exist.
func SubmissionFieldNames(app core.App, deploymentID string, max int) (names []string, more bool, err error) {
	var rows []struct {
		Key string `db:"key"`
	}
	err = app.DB().NewQuery(`SELECT j.key AS key FROM {{` + SubmissionsCollection + `}} s, json_each(s.[[` + submissionData + `]]) j
		WHERE s.[[` + submissionDeployment + `]] = {:d} AND json_type(s.[[` + submissionData + `]]) = 'object'
		GROUP BY j.key ORDER BY COUNT(*) DESC, j.key LIMIT {:n}`).
		Bind(dbx.Params{"d": deploymentID, "n": max + 1}).All(&rows)
	if err != nil {
		return nil, false, fmt.Errorf("list submission fields of %s: %w", deploymentID, err)
	}
	if len(rows) > max {
		rows, more = rows[:max], true
	}
	for _, r := range rows {
		names = append(names, r.Key)
	}
	slices.Sort(names)
	return names, more, nil
}
