package abuse

import (
	"time"

	"github.com/pocketbase/pocketbase/core"
)

// Collection is the reports' collection (migration 1763801600_reports).
const Collection = "reports"

// The reports' fields.
const (
	FieldURL        = "url"
	FieldReason     = "reason"
	FieldDetails    = "details"
	FieldEmail      = "email"
	FieldStatus     = "status"
	FieldDeployment = "deployment"
	FieldSlug       = "slug"
	FieldHost       = "host"
	FieldIP         = "ip"
	FieldNote       = "note"
	FieldMailedAt   = "mailed_at"
	FieldCreated    = "created"
)

// A report's status: open until an admin dismisses it (nothing to do) or
// acts on it (a takedown, a block).
const (
	StatusOpen      = "open"
	StatusDismissed = "dismissed"
	StatusActioned  = "actioned"
)

// Reasons are the reasons a report may give, in the order the form lists
// them (the collection's select field holds the same).
var Reasons = []string{"phishing", "malware", "spam", "illegal", "copyright", "other"}

// ReasonLabels are the reasons as the form shows them.
var ReasonLabels = map[string]string{
	"phishing":  "Phishing (steals passwords or payment details)",
	"malware":   "Malware or a harmful download",
	"spam":      "Spam",
	"illegal":   "Illegal content",
	"copyright": "Copyright infringement",
	"other":     "Something else",
}

// Bounds of a report's fields, in bytes (url) and characters (details,
// note): the collection's fields hold the same maxima.
const (
	MaxURL     = 2048
	MaxDetails = 2000
	MaxEmail   = 254
	MaxNote    = 2000
)

// Report is a record of the reports collection.
type Report struct {
	core.BaseRecordProxy
}

// ReportOf wraps a record of the reports collection.
func ReportOf(rec *core.Record) *Report {
	r := new(Report)
	r.SetProxyRecord(rec)
	return r
}

// URL is the reported address, as the reporter gave it.
func (r *Report) URL() string { return r.GetString(FieldURL) }

// Reason is one of Reasons.
func (r *Report) Reason() string { return r.GetString(FieldReason) }

// Details are the reporter's words ("" for none).
func (r *Report) Details() string { return r.GetString(FieldDetails) }

// Email is where the reporter may be answered ("" for none).
func (r *Report) Email() string { return r.GetString(FieldEmail) }

// Status is StatusOpen, StatusDismissed or StatusActioned.
func (r *Report) Status() string { return r.GetString(FieldStatus) }

// DeploymentID is the reported deployment ("" once it is deleted).
func (r *Report) DeploymentID() string { return r.GetString(FieldDeployment) }

// Slug is the reported site's slug when it was reported.
func (r *Report) Slug() string { return r.GetString(FieldSlug) }

// Host is the reported URL's host (a slug host, a preview host or a
// custom domain).
func (r *Report) Host() string { return r.GetString(FieldHost) }

// IP is the reporter's client address (behind --trusted-proxies).
func (r *Report) IP() string { return r.GetString(FieldIP) }

// Note is the admin's note on the decision.
func (r *Report) Note() string { return r.GetString(FieldNote) }

// MailedAt is when the admins were mailed the report (zero: not yet).
func (r *Report) MailedAt() time.Time { return r.GetDateTime(FieldMailedAt).Time() }

// Created is when the report was made.
func (r *Report) Created() time.Time { return r.GetDateTime(FieldCreated).Time() }
