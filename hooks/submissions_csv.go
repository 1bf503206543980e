package hooks

import (
	"fmt"
	"net/http"
	"time"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites/forms"
)

// csvPageWriteTimeout is how long the client has to take in a page of the
// CSV export (forms.CSVPageRows rows).
const csvPageWriteTimeout = 2 * time.Minute

// submissionsCSV streams every submission of dep as CSV (forms.CSVExport):
// a download named after its slug.
func submissionsCSV(e *core.RequestEvent, rec *core.Record) error {
	dep := forms.DeploymentOf(rec)
	export, err := forms.NewCSVExport(e.App, dep.Id)
	if err != nil {
		return err
	}
	h := e.Response.Header()
	h.Set("Content-Type", "text/csv; charset=utf-8")
	h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s-submissions.csv"`, dep.Slug()))
	e.Response.WriteHeader(http.StatusOK)

	rc := http.NewResponseController(e.Response)
	err = export.Stream(e.Request.Context(), e.Response, func() {
		// the server's write timeout bounds a response, not an export
		// of any length: each page gets its own
		_ = rc.SetWriteDeadline(time.Now().Add(csvPageWriteTimeout))
	})
	if err != nil && e.Request.Context().Err() == nil {
		// The status is sent: abort the connection, so that the client
		// sees a cut download rather than a file that looks complete.
		e.App.Logger().Warn("submissions CSV export failed", "deployment", dep.Id, "error", err)
		panic(http.ErrAbortHandler)
	}
	return nil
}
