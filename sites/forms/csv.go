package forms

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"strings"

	"github.com/pocketbase/pocketbase/core"
)

// CSV export limits. The export streams: it holds one page of rows at a
// time, however many submissions a deployment has.
const (
	// CSVPageRows is how many submissions are read per query.
	CSVPageRows = 500
	// MaxCSVFieldColumns bounds the field columns: the most used field
	// names get one each, the rest of a row's fields go to the last
	// column as JSON. Field names are the submitter's choice: without a
	// bound, a form flooded with random names would make a sheet of
	// millions of columns.
	MaxCSVFieldColumns = 100
)

// CSVOtherColumn is the last column's name when some fields have no
// column of their own.
const CSVOtherColumn = "other_fields"

// CSVExport is every submission of a deployment as CSV, newest first: id,
// created_at, one column per field name (sorted; the MaxCSVFieldColumns
// most used), and other_fields with the rest as JSON when there are more
// names.
type CSVExport struct {
	app          core.App
	deploymentID string
	columns      []string
	more         bool
}

// NewCSVExport prepares the export of the deployment's submissions: it
// reads which field names get a column, so that an error comes before any
// byte is written.
func NewCSVExport(app core.App, deploymentID string) (*CSVExport, error) {
	cols, more, err := SubmissionFieldNames(app, deploymentID, MaxCSVFieldColumns)
	if err != nil {
		return nil, err
	}
	return &CSVExport{app: app, deploymentID: deploymentID, columns: cols, more: more}, nil
}

// Stream writes the export to w, calling beforePage (if not nil) before
// each page of CSVPageRows rows. It stops with ctx's error when ctx is
// done between pages, and returns the first read or write error.
func (x *CSVExport) Stream(ctx context.Context, w io.Writer, beforePage func()) error {
	cw := csv.NewWriter(w)
	header := []string{"id", "created_at"}
	for _, c := range x.columns {
		header = append(header, csvCell(c)) // field names are the submitter's too
	}
	if x.more {
		header = append(header, CSVOtherColumn)
	}
	_ = cw.Write(header)
	hasColumn := make(map[string]bool, len(x.columns))
	for _, c := range x.columns {
		hasColumn[c] = true
	}
	row := make([]string, 0, len(header))
	err := EachSubmissionPage(x.app, x.deploymentID, CSVPageRows, func(page []*Submission) error {
		if beforePage != nil {
			beforePage()
		}
		for _, sub := range page {
			s := sub.JSON()
			row = append(row[:0], s.ID, s.CreatedAt)
			for _, c := range x.columns {
				row = append(row, csvCell(s.Data[c]))
			}
			if x.more {
				row = append(row, csvCell(otherFields(s.Data, hasColumn)))
			}
			if err := cw.Write(row); err != nil {
				return err
			}
		}
		return ctx.Err() // the client went away
	})
	cw.Flush()
	if err == nil {
		err = cw.Error()
	}
	return err
}

// otherFields is the JSON of the fields without a column of their own;
// empty when there are none.
func otherFields(data map[string]any, hasColumn map[string]bool) string {
	rest := map[string]any{}
	for k, v := range data {
		if !hasColumn[k] {
			rest[k] = v
		}
	}
	if len(rest) == 0 {
		return ""
	}
	b, _ := json.Marshal(rest) // sorted keys
	return string(b)
}

// csvCell writes a value for a spreadsheet: DisplayValue, with a formula
// start (= + - @, also after leading white space) made inert with a quote.
func csvCell(v any) string {
	s := DisplayValue(v)
	if t := strings.TrimLeft(s, " \t\r\n"); t != "" && strings.ContainsRune("=+-@", rune(t[0])) {
		return "'" + s
	}
	if s != "" && strings.ContainsRune("\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
