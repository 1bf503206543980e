package forms

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/types"
)

// Fields of the submissions collection.
const (
	submissionDeployment = "deployment"
	submissionData       = "data"
	submissionCreated    = "created"
)

var _ core.RecordProxy = (*Submission)(nil)

// Submission is a record of the submissions collection: the fields of one
// form post to a deployment, stored as a JSON object in the form's order.
type Submission struct {
	core.BaseRecordProxy
}

// NewSubmission returns a new, unsaved submission.
func NewSubmission(app core.App) (*Submission, error) {
	col, err := app.FindCachedCollectionByNameOrId(SubmissionsCollection)
	if err != nil {
		return nil, fmt.Errorf("find %s collection: %w", SubmissionsCollection, err)
	}
	return SubmissionOf(core.NewRecord(col)), nil
}

// SubmissionOf is rec, a submissions record, as a Submission.
func SubmissionOf(rec *core.Record) *Submission {
	s := &Submission{}
	s.SetProxyRecord(rec)
	return s
}

// DeploymentID returns the "deployment" field: the deployment posted to.
func (s *Submission) DeploymentID() string { return s.GetString(submissionDeployment) }

// SetDeploymentID sets the "deployment" field.
func (s *Submission) SetDeploymentID(id string) { s.Set(submissionDeployment, id) }

// RawData returns the "data" field as stored: a JSON object whose keys
// come in the form's order.
func (s *Submission) RawData() []byte { return []byte(s.GetString(submissionData)) }

// SetRawData sets the "data" field to raw, a JSON object.
func (s *Submission) SetRawData(raw []byte) { s.Set(submissionData, types.JSONRaw(raw)) }

// Data returns the "data" field decoded; nil when it is not an object.
func (s *Submission) Data() map[string]any {
	var data map[string]any
	_ = json.Unmarshal(s.RawData(), &data)
	return data
}

// Created returns the "created" field.
func (s *Submission) Created() time.Time { return s.GetDateTime(submissionCreated).Time() }

// JSON is the submission as the API and webhooks show it.
func (s *Submission) JSON() *SubmissionJSON {
	return &SubmissionJSON{ID: s.Id, Data: s.Data(), CreatedAt: s.Created().UTC().Format(time.RFC3339)}
}

// Fields lists the submission's fields in their stored order (the
// form's, or sorted for old submissions), each value as DisplayValue
// shows it.
func (s *Submission) Fields() []Field {
	return OrderedFields(s.RawData(), s.Data())
}
