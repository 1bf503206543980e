package hooks

import (
	"sitedrop/sites/forms"
	"sitedrop/ui"
)

// orderedFields lists a stored submission's fields in their stored order
// (the form's, or sorted for old submissions); raw is its stored data and
// data that decoded.
func orderedFields(raw []byte, data map[string]any) []ui.SubmissionField {
	return uiFields(forms.OrderedFields(raw, data))
}

// uiFields are a submission's fields as pages and mails show them.
func uiFields(fields []forms.Field) []ui.SubmissionField {
	out := make([]ui.SubmissionField, len(fields))
	for i, f := range fields {
		out[i] = ui.SubmissionField{Name: f.Name, Value: f.Value}
	}
	return out
}
