package pages

import (
	"sitedrop/sites/forms"
	"sitedrop/ui"
)

// SubmissionFields are a submission's fields as the pages and the
// notification mails show them.
func SubmissionFields(fields []forms.Field) []ui.SubmissionField {
	out := make([]ui.SubmissionField, len(fields))
	for i, f := range fields {
		out[i] = ui.SubmissionField{Name: f.Name, Value: f.Value}
	}
	return out
}
