package abuse

import (
	validation "github.com/pocketbase/ozzo-validation/v4"
	"github.com/pocketbase/pocketbase/core"
)

// frozen are the fields a report keeps as it was filed: what the
// reporter said and where from. An admin decides (status) and writes a
// note; the evidence stays as it came.
var frozen = []string{FieldURL, FieldReason, FieldDetails, FieldEmail, FieldIP, FieldHost, FieldSlug}

// CheckRecord is the rule every writer of a report meets (the record
// hooks run it on each save, the dashboard's included): a report filed
// keeps the reporter's fields; a change to one is a validation error on
// that field.
func CheckRecord(rec *core.Record) error {
	if rec.IsNew() {
		return nil
	}
	orig := rec.Original()
	for _, f := range frozen {
		if rec.GetString(f) != orig.GetString(f) {
			return validation.Errors{f: validation.NewError("validation_report_frozen",
				"A report keeps what the reporter sent: write in note instead")}
		}
	}
	return nil
}

// DefaultStatus makes a new report without a status open (one created in
// the dashboard with the field left empty).
func DefaultStatus(rec *core.Record) {
	if rec.IsNew() && rec.GetString(FieldStatus) == "" {
		rec.Set(FieldStatus, StatusOpen)
	}
}
