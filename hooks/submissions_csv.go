package hooks

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"sitedrop/sites/forms"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"
)

// CSV export limits. The export streams: it holds one page of rows at a
// time, however many submissions a deployment has.
const (
	// csvPageRows is how many submissions are read per query.
	csvPageRows = 500
	// maxCSVFieldColumns bounds the field columns: the most used field
	// names get one each, the rest of a row's fields go to the last
	// column as JSON. Field names are the submitter's choice: without a
	// bound, a form flooded with random names would make a sheet of
	// millions of columns.
	maxCSVFieldColumns = 100
	// csvPageWriteTimeout is how long the client has to take in a page.
	csvPageWriteTimeout = 2 * time.Minute
)

// csvOtherColumn is the last column's name when some fields have no
// column of their own.
const csvOtherColumn = "other_fields"

// submissionsCSV exports every submission of dep, newest first: id,
// created_at, one column per field name (sorted; the 100 most used), and
// other_fields with the rest as JSON when there are more names.
func (sd *sitedrop) submissionsCSV(e *core.RequestEvent, dep *core.Record) error {
	cols, more, err := submissionFieldColumns(e.App, dep.Id)
	if err != nil {
		return fmt.Errorf("list submission fields: %w", err)
	}
	h := e.Response.Header()
	h.Set("Content-Type", "text/csv; charset=utf-8")
	h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s-submissions.csv"`, dep.GetString("slug")))
	e.Response.WriteHeader(http.StatusOK)

	w := csv.NewWriter(e.Response)
	header := []string{"id", "created_at"}
	for _, c := range cols {
		header = append(header, csvCell(c)) // field names are the submitter's too
	}
	if more {
		header = append(header, csvOtherColumn)
	}
	_ = w.Write(header)
	hasColumn := make(map[string]bool, len(cols))
	for _, c := range cols {
		hasColumn[c] = true
	}
	row := make([]string, 0, len(header))
	rc := http.NewResponseController(e.Response)
	err = eachSubmissionPage(e.App, dep.Id, func(page []*core.Record) error {
		// the server's write timeout bounds a response, not an export
		// of any length: each page gets its own
		_ = rc.SetWriteDeadline(time.Now().Add(csvPageWriteTimeout))
		for _, r := range page {
			s := submissionJSON(r)
			row = append(row[:0], s.ID, s.CreatedAt)
			for _, c := range cols {
				row = append(row, csvCell(s.Data[c]))
			}
			if more {
				row = append(row, csvCell(otherFields(s.Data, hasColumn)))
			}
			if err := w.Write(row); err != nil {
				return err
			}
		}
		return e.Request.Context().Err() // the client went away
	})
	w.Flush()
	if err == nil {
		err = w.Error()
	}
	if err != nil && e.Request.Context().Err() == nil {
		// The status is sent: abort the connection, so that the client
		// sees a cut download rather than a file that looks complete.
		e.App.Logger().Warn("submissions CSV export failed", "deployment", dep.Id, "error", err)
		panic(http.ErrAbortHandler)
	}
	return nil
}

// submissionFieldColumns returns the field names that get a column,
// sorted, and whether other names exist.
func submissionFieldColumns(app core.App, depID string) (cols []string, more bool, err error) {
	var names []struct {
		Key string `db:"key"`
	}
	err = app.DB().NewQuery(`SELECT j.key AS key FROM ` + forms.SubmissionsCollection + ` s, json_each(s.data) j
		WHERE s.deployment = {:d} AND json_type(s.data) = 'object'
		GROUP BY j.key ORDER BY COUNT(*) DESC, j.key LIMIT {:n}`).
		Bind(dbx.Params{"d": depID, "n": maxCSVFieldColumns + 1}).All(&names)
	if err != nil {
		return nil, false, err
	}
	if len(names) > maxCSVFieldColumns {
		names, more = names[:maxCSVFieldColumns], true
	}
	for _, n := range names {
		cols = append(cols, n.Key)
	}
	slices.Sort(cols)
	return cols, more, nil
}

// eachSubmissionPage calls fn with every submission of a deployment,
// newest first, a page at a time. Keyset paging: each query is short,
// holds no database connection while the client reads, and starts where
// the last one stopped (the redundant created <= bound lets SQLite seek
// on the (deployment, created) index instead of scanning from the
// newest row).
func eachSubmissionPage(app core.App, depID string, fn func([]*core.Record) error) error {
	filter, params := "deployment = {:d}", dbx.Params{"d": depID}
	for {
		recs, err := app.FindRecordsByFilter(forms.SubmissionsCollection, filter, "-created,-id", csvPageRows, 0, params)
		if err != nil {
			return fmt.Errorf("read submissions: %w", err)
		}
		if len(recs) > 0 {
			if err := fn(recs); err != nil {
				return err
			}
		}
		if len(recs) < csvPageRows {
			return nil
		}
		last := recs[len(recs)-1]
		filter = "deployment = {:d} && created <= {:c} && (created < {:c} || id < {:id})"
		params = dbx.Params{"d": depID, "c": last.GetString("created"), "id": last.Id}
	}
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

// csvCell writes a value for a spreadsheet: displayValue, with a formula
// start (= + - @, also after leading white space) made inert with a quote.
func csvCell(v any) string {
	s := displayValue(v)
	if t := strings.TrimLeft(s, " \t\r\n"); t != "" && strings.ContainsRune("=+-@", rune(t[0])) {
		return "'" + s
	}
	if s != "" && strings.ContainsRune("\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
