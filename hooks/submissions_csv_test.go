package hooks

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"sitedrop/sites/forms"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"
)

// insertSubmissions stores submissions with the given creation times
// straight in the table (the collection's autodate would set them).
func insertSubmissions(t *testing.T, app core.App, depID string, created []time.Time, data func(i int) map[string]any) []string {
	t.Helper()
	ids := make([]string, len(created))
	err := app.RunInTransaction(func(tx core.App) error {
		for i, c := range created {
			b, _ := json.Marshal(data(i))
			ids[i] = core.GenerateDefaultRandomId()
			_, err := tx.DB().NewQuery(`INSERT INTO ` + forms.SubmissionsCollection + ` (id, deployment, data, created) VALUES ({:id}, {:d}, {:data}, {:c})`).
				Bind(dbx.Params{"id": ids[i], "d": depID, "data": string(b), "c": c.UTC().Format("2006-01-02 15:04:05.000Z")}).Execute()
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestSubmissionsCSVStreamsEveryRow exports more submissions than a page
// holds, with creation times shared across page boundaries: every row
// comes once, newest first (then by id), and field names past the column
// bound land in other_fields.
func TestSubmissionsCSVStreamsEveryRow(t *testing.T) {
	t.Parallel()
	app, _ := newFixtureApp(t)
	defer app.Cleanup()
	const n = 3*forms.CSVPageRows + 7
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	created := make([]time.Time, n)
	for i := range created {
		created[i] = base.Add(time.Duration(i/9) * time.Millisecond) // nine rows per instant
	}
	extra := forms.MaxCSVFieldColumns + 20 // field names used once each, beyond the bound
	ids := insertSubmissions(t, app, idAliceSite, created, func(i int) map[string]any {
		d := map[string]any{"name": fmt.Sprintf("row %d", i), "email": "a@example.com"}
		if i < extra {
			d[fmt.Sprintf("f%03d", i)] = "x"
		}
		return d
	})
	insertSubmissions(t, app, idBobSite, []time.Time{base}, func(int) map[string]any { return map[string]any{"bobonly": "y"} })

	// newest first; rows of the same instant by id, descending
	type sub struct {
		id string
		at time.Time
		i  int
	}
	want := make([]sub, n)
	for i := range want {
		want[i] = sub{ids[i], created[i], i}
	}
	slices.SortFunc(want, func(a, b sub) int {
		if c := b.at.Compare(a.at); c != 0 {
			return c
		}
		return strings.Compare(b.id, a.id)
	})

	res, body := do(t, newMux(t, app), http.MethodGet, "/submissions/"+idAliceSite+"?format=csv", "", bearer(keyAlice))
	if res.StatusCode != 200 {
		t.Fatalf("%d %s", res.StatusCode, body)
	}
	rows, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	header := rows[0]
	if len(header) != 2+forms.MaxCSVFieldColumns+1 || header[len(header)-1] != forms.CSVOtherColumn {
		t.Fatalf("%d columns, last %q", len(header), header[len(header)-1])
	}
	if slices.Contains(header, "bobonly") || !slices.Contains(header, "name") || !slices.Contains(header, "email") {
		t.Fatalf("header %q", header)
	}
	if !slices.IsSorted(header[2 : len(header)-1]) {
		t.Errorf("field columns not sorted: %q", header)
	}
	if len(rows)-1 != n {
		t.Fatalf("%d rows, want %d", len(rows)-1, n)
	}
	nameCol := slices.Index(header, "name")
	for k, w := range want {
		row := rows[1+k]
		if row[0] != w.id || row[nameCol] != fmt.Sprintf("row %d", w.i) {
			t.Fatalf("row %d is %q, want id %s (row %d)", k, row[:2], w.id, w.i)
		}
		if row[1] != timestamp(w.at) {
			t.Fatalf("row %d created_at %q, want %s", k, row[1], w.at)
		}
		other := row[len(row)-1]
		name := fmt.Sprintf("f%03d", w.i)
		switch {
		case w.i >= extra:
			if other != "" {
				t.Fatalf("row %d: other_fields %q", w.i, other)
			}
		case slices.Contains(header, name):
			if other != "" || row[slices.Index(header, name)] != "x" {
				t.Fatalf("row %d: %s in its column, other_fields %q", w.i, name, other)
			}
		default:
			if other != fmt.Sprintf(`{"%s":"x"}`, name) {
				t.Fatalf("row %d: other_fields %q", w.i, other)
			}
		}
	}
}
